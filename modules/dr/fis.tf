# A drill that breaks replication on purpose (DDB-DR-01): an AWS FIS
# experiment template whose one action, aws:dynamodb:global-table-pause-replication,
# pauses replication into the secondary region's replicas of var.tables for
# fis_pause_replication.duration. `dynops dr drill --pause-replication ID`
# starts it, checks that dynops refuses a failover into the paused region and
# that the ReplicationLatency alarm fires, then stops it.
#
# The action writes a time-bound Deny for the replication service-linked
# role into each targeted replica's resource policy and removes it at the
# end (aws-samples/fis-template-library, dynamodb-region-impairment), so the
# experiment's role needs the resource-policy actions on those replicas and
# nothing else: it names the tables by ARN (no tag search, so no
# tag:GetResources).

locals {
  fis_enabled = var.fis_pause_replication.enabled && length(var.tables) > 0
  # The replicas the experiment pauses: the secondary region's.
  fis_table_arns = [for t in var.tables : "arn:${local.partition}:dynamodb:${local.secondary}:${local.account}:table/${t}"]
  fis_actions    = ["dynamodb:DescribeTable", "dynamodb:GetResourcePolicy", "dynamodb:PutResourcePolicy", "dynamodb:DeleteResourcePolicy"]
}

data "aws_iam_policy_document" "fis_assume" {
  count = local.fis_enabled ? 1 : 0

  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["fis.amazonaws.com"]
    }
    # Only this account's experiments, run in the region of the template,
    # may use the role (confused deputy; AWS FIS sets aws:SourceArn to the
    # experiment's ARN: arn:PARTITION:fis:REGION:ACCOUNT:experiment/ID).
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account]
    }
    condition {
      test     = "ArnLike"
      variable = "aws:SourceArn"
      values   = ["arn:${local.partition}:fis:${local.secondary}:${local.account}:experiment/*"]
    }
  }
}

resource "aws_iam_role" "fis" {
  count = local.fis_enabled ? 1 : 0

  name                 = "${var.env}-dynamodb-fis-pause-replication"
  description          = "AWS FIS: pause replication into ${local.secondary} of the ${var.env} global tables (dynops dr drill --pause-replication, DDB-DR-01)."
  assume_role_policy   = data.aws_iam_policy_document.fis_assume[0].json
  permissions_boundary = var.permissions_boundary_arn
  tags                 = local.tags
}

data "aws_iam_policy_document" "fis" {
  count = local.fis_enabled ? 1 : 0

  statement {
    sid       = "PauseReplication"
    actions   = local.fis_actions
    resources = local.fis_table_arns
  }

  # DDB-SEC-01: the pause statement is a resource policy this role writes,
  # and a resource policy can grant anything (DeleteTable, UpdateTable,
  # Scan, PutItem, ...): an explicit Deny of everything outside the
  # documented set wins over whatever it grants. A DR fence with a
  # break-glass role also denies this role the policy actions (dynops dr
  # drill refuses to start on a fenced replica).
  statement {
    sid         = "DenyOutsideDocumentedSet"
    effect      = "Deny"
    not_actions = local.fis_actions
    resources   = ["*"]
  }
}

resource "aws_iam_role_policy" "fis" {
  count = local.fis_enabled ? 1 : 0

  name   = "pause-replication"
  role   = aws_iam_role.fis[0].id
  policy = data.aws_iam_policy_document.fis[0].json
}

resource "aws_fis_experiment_template" "pause_replication" {
  count    = local.fis_enabled ? 1 : 0
  provider = aws.secondary

  description = "Pause replication into ${local.secondary} of ${join(", ", var.tables)} for ${var.fis_pause_replication.duration} (dynops dr drill --pause-replication)"
  role_arn    = aws_iam_role.fis[0].arn

  # Stop early when any of these alarms fires; none given: FIS's "none".
  dynamic "stop_condition" {
    for_each = length(var.fis_pause_replication.stop_alarm_arns) > 0 ? var.fis_pause_replication.stop_alarm_arns : [""]
    content {
      source = stop_condition.value == "" ? "none" : "aws:cloudwatch:alarm"
      value  = stop_condition.value == "" ? null : stop_condition.value
    }
  }

  target {
    name           = "Tables"
    resource_type  = "aws:dynamodb:global-table"
    resource_arns  = local.fis_table_arns
    selection_mode = "ALL"
  }

  action {
    name      = "pause-replication"
    action_id = "aws:dynamodb:global-table-pause-replication"

    parameter {
      key   = "duration"
      value = var.fis_pause_replication.duration
    }

    target {
      key   = "Tables"
      value = "Tables"
    }
  }

  tags = merge(local.tags, { Name = "${var.env}-dynamodb-pause-replication" })
}
