package audit

// The names of the actions an audit record lists (Record.Actions[].What):
// the audit log's public vocabulary, documented in docs/audit.md. A new kind
// of action gets a constant here and a row there; renaming one breaks the
// log's readers.
const (
	// ActProtection is the protection decision of a target (protected or not, and why), before any confirmation.
	ActProtection = "protection"
	// ActRestoreTable is a point-in-time restore started (or planned, in a dry run) into a new table.
	ActRestoreTable = "restore-table"
	// ActResumeRestore is a restore found in progress (--resume) and followed to its end.
	ActResumeRestore = "resume-restore"
	// ActApplySetting is a setting the restore or import drops, re-applied to the new table and read back.
	ActApplySetting = "apply-setting"
	// ActRepairItems is the items a repair plans to write (dry run) or wrote.
	ActRepairItems = "repair-items"
	// ActAllowUnrelatedSource is a repair from a source dynops cannot show is a restore of the target, with the given reason.
	ActAllowUnrelatedSource = "allow-unrelated-source"
	// ActExportVouched is an export read (to write from, import, verify or diff), with who vouched for it (DynamoDB, or the --unverified-exports reason).
	ActExportVouched = "export-vouched"
	// ActExportFull is a full export to S3 started.
	ActExportFull = "export-full"
	// ActExportIncremental is an incremental export to S3 started.
	ActExportIncremental = "export-incremental"
	// ActExportSeriesStart is a checkpointed series of incremental exports started.
	ActExportSeriesStart = "export-series-start"
	// ActExportSeriesAdvance is the series' checkpoint moved to the end of an export's window.
	ActExportSeriesAdvance = "export-series-advance"
	// ActPlanImport is what an import would do (dry run).
	ActPlanImport = "plan-import"
	// ActRefuseImport is an import refused before anything was started, and why.
	ActRefuseImport = "refuse-import"
	// ActImportDestinations is a migration backfill that creates its destinations with ImportTable from per-destination files under an S3 prefix.
	ActImportDestinations = "import-destinations"
	// ActImportTable is an import from S3 into a new table started.
	ActImportTable = "import-table"
	// ActPlanExportApply is what applying incremental exports would do (dry run).
	ActPlanExportApply = "plan-export-apply"
	// ActExportApply is one incremental export applied onto the table.
	ActExportApply = "export.apply"
	// ActExportAppliedThrough is the table's dynops:applied-through tag moved (read back).
	ActExportAppliedThrough = "export.applied-through"
	// ActCapacityBudget is a bulk step's capacity budget on one table (read or write units per second and where it came from) and what it used.
	ActCapacityBudget = "capacity-budget"
	// ActPlanExportRevert is what reverting a window of incremental exports would do (dry run).
	ActPlanExportRevert = "plan-export-revert"
	// ActExportRevert is a window of incremental exports reverted on the table: the counts, conflicts and write capacity.
	ActExportRevert = "export.revert"
	// ActDLQWouldReplay is a DLQ record a redrive would replay (dry run).
	ActDLQWouldReplay = "dlq.would-replay"
	// ActDLQReplay is a DLQ record replayed (the function invoked or the message sent).
	ActDLQReplay = "dlq.replay"
	// ActDLQKeep is a DLQ message left in the queue, and why.
	ActDLQKeep = "dlq.keep"
	// ActDLQDelete is a replayed message deleted from the DLQ.
	ActDLQDelete = "dlq.delete"
	// ActDLQDeleteFailed is a replayed message that could not be deleted (it will be seen again).
	ActDLQDeleteFailed = "dlq.delete-failed"
	// ActDLQDiscardExpired is a message whose records left the stream, deleted (--discard-expired).
	ActDLQDiscardExpired = "dlq.discard-expired"
	// ActDLQWouldMove is the messages a move would move (dry run).
	ActDLQWouldMove = "dlq.would-move"
	// ActDLQMoveTask is an SQS message move task started.
	ActDLQMoveTask = "dlq.move-task"
	// ActDLQMove is one message moved by receive/send/delete (--max).
	ActDLQMove = "dlq.move"
	// ActRecordStreamPosition is the source stream's position recorded before a backfill reads.
	ActRecordStreamPosition = "record-stream-position"
	// ActReadExport is the export a backfill reads instead of scanning the source.
	ActReadExport = "read-export"
	// ActImportFindings is the findings `dynops check --to-security-hub` imported into Security Hub.
	ActImportFindings = "import-findings"
	// ActRunbookChangeParam is a runbook parameter changed on resume (old and new value).
	ActRunbookChangeParam = "runbook.change-param"
	// ActRunbookDecide is a decision step's choice and how it was made (--decide, typed, or the default).
	ActRunbookDecide = "runbook.decide"
	// ActRunbookRestartFrom is a runbook run restarted at a step (--restart-from): the steps to run again.
	ActRunbookRestartFrom = "runbook.restart-from"
	// ActRunbookApprovalRequested is a destructive step on protected targets waiting for another caller's approval of its plan (hash, requester, expiry).
	ActRunbookApprovalRequested = "runbook.approval-requested"
	// ActRunbookApprove is an approval of a step's plan by another caller (`runbook approve`).
	ActRunbookApprove = "runbook.approve"
	// ActRunbookReject is a rejection of a step's plan (`runbook reject`), and its reason.
	ActRunbookReject = "runbook.reject"
	// ActRunbookApprovalUsed is an approved plan run by the runbook run, with its approvers.
	ActRunbookApprovalUsed = "runbook.approval-used"
	// ActRunbookApprovalRejected is a run stopped at a step whose plan was rejected.
	ActRunbookApprovalRejected = "runbook.approval-rejected"
	// ActRunbookInAWS is a runbook run started as an ECS task (`runbook run --in-aws`): the task ARN, cluster, task definition and command.
	ActRunbookInAWS = "runbook.in-aws"
	// ActRunbookApprovalTimedOut is a run stopped at a step whose approval request timed out.
	ActRunbookApprovalTimedOut = "runbook.approval-timed-out"
	// ActRunbookBreakGlass is a gate of a destructive step (its approval, or its env's cap) skipped by the break-glass role, with the reason.
	ActRunbookBreakGlass = "runbook.break-glass"
	// ActRunbookNotifyFailed is a notification of a runbook run that was not delivered (the run went on): the target (never a webhook's URL), the event, the error.
	ActRunbookNotifyFailed = "runbook.notify-failed"
	// ActResumeBackfill is a backfill resumed from its state file.
	ActResumeBackfill = "resume-backfill"
	// ActBackfillItems is the items a backfill wrote.
	ActBackfillItems = "backfill-items"
	// ActApplyStreamChanges is one catch-up pass: the stream changes applied to the destinations.
	ActApplyStreamChanges = "apply-stream-changes"
	// ActCutover is the steps a cutover would take (dry run).
	ActCutover = "cutover"
	// ActFenceWrites is the source's writes fenced by its resource policy (read back).
	ActFenceWrites = "fence-writes"
	// ActDrainStream is the stream drained after the fence.
	ActDrainStream = "drain-stream"
	// ActFlipPointer is the application's pointer (SSM parameter) set, read back.
	ActFlipPointer = "flip-pointer"
	// ActUnfenceWrites is the fence removed from the source (read back).
	ActUnfenceWrites = "unfence-writes"
	// ActRollback is the steps a rollback would take (dry run).
	ActRollback = "rollback"
	// ActShardRun is a sharded run submitted to an engine: its run URI (s3://BUCKET/PREFIX/RUN-ID), engine, shards and per-shard budgets.
	ActShardRun = "shard-run"
	// ActShardStage is one shard of a sharded run's stage, run by `dynops shard run`.
	ActShardStage = "shard-stage"
)

// DRStepAction is the action of one step of a DR switch: "dr failover:
// fence-writes", "dr drill: canary".
func DRStepAction(mode, step string) string { return "dr " + mode + ": " + step }

// ItemAction is the action of one `dynops item` write (op: put, update or
// delete) in each of its outcomes: "item-put" (written, images hashed or
// redacted), "plan-item-put" (the dry run), "item-put-refused" (its
// condition no longer held: nothing written).
func ItemAction(op string, outcome ItemOutcome) string {
	switch outcome {
	case ItemPlanned:
		return "plan-item-" + op
	case ItemRefused:
		return "item-" + op + "-refused"
	}
	return "item-" + op
}
