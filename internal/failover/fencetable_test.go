package failover

import (
	"fmt"
	"testing"
	"time"

	"github.com/dynops/dynops/internal/testctx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnfenceReadsBack_DDB_DR_01: removing the fence writes the policy
// without dynops' statements (the table's own stay), then reads it back
// until it shows no fence readBacks times in a row, and says so; a table
// without a fence is left alone, and a fence dynops did not write is refused
// with nothing written.
func TestUnfenceReadsBack_DDB_DR_01(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-hoge-user"
	own := `{"Version":"2012-10-17","Statement":[{"Sid":"AppReads","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:role/app"},"Action":"dynamodb:GetItem","Resource":"` + arn + `"}]}`
	fenced := func(t *testing.T, doc, sid string) string {
		t.Helper()
		out, err := withFence(doc, arn, "", sid)
		require.NoError(t, err)
		return out
	}
	foreign := `{"Version":"2012-10-17","Statement":[{"Sid":"SomeoneElses","Effect":"Deny","Principal":"*","Action":"dynamodb:*","Resource":"` + arn + `"}]}`

	for _, c := range []struct {
		name     string
		doc      func(t *testing.T) string
		had      bool
		wantDoc  string // "": no policy left
		wantErr  string
		writes   int
		wantSays string
	}{
		{name: "only the fence: the policy goes", doc: func(t *testing.T) string { return fenced(t, "", FenceSid) },
			had: true, writes: 1, wantSays: fmt.Sprintf("fence removed from %s, read back %d times (no resource policy left)", arn, readBacks)},
		{name: "the table's own statement stays", doc: func(t *testing.T) string { return fenced(t, own, FenceSid) },
			had: true, wantDoc: own, writes: 1, wantSays: fmt.Sprintf("fence removed from %s, read back %d times (%d bytes of policy left)", arn, readBacks, len(own))},
		{name: "a failback fence goes too", doc: func(t *testing.T) string { return fenced(t, own, FailbackFenceSid) },
			had: true, wantDoc: own, writes: 1, wantSays: "read back"},
		{name: "no fence: nothing written", doc: func(*testing.T) string { return own }, wantDoc: own, wantSays: "carries no fence"},
		{name: "a fence dynops did not write: refused, nothing written", doc: func(*testing.T) string { return foreign },
			wantDoc: foreign, wantErr: "which dynops did not write"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := &policyDB{doc: c.doc(t), rev: "rev-1", land: true}
			had, before, detail, err := unfenceTable(testctx.Bounded(t), db, arn, OwnerDR, "", time.Millisecond)
			assert.Equal(t, c.had, had, "had a fence")
			assert.Equal(t, c.doc(t), before, "the policy before, for the undo command")
			assert.Equal(t, c.writes, len(db.expected)+db.deletes, "policy writes (put or delete)")
			if c.wantDoc == "" {
				assert.Empty(t, db.doc, "the policy left")
			} else {
				assert.JSONEq(t, c.wantDoc, db.doc, "the policy left")
			}
			if c.wantErr != "" {
				require.ErrorContains(t, err, c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Contains(t, detail, c.wantSays)
			if c.writes > 0 {
				assert.GreaterOrEqual(t, db.gets, 1+readBacks, "the policy is read before the write and %d times after it", readBacks)
			}
		})
	}
}

// TestFenceStepsSayWhatWasReadBack: the fence and unfence steps of a switch
// take their detail from the policy read back and their undo from the policy
// before; a refusal is the step's error, with nothing claimed.
func TestFenceStepsSayWhatWasReadBack(t *testing.T) {
	const region, arn = "eu-west-1", "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-hoge-user"
	own := `{"Version":"2012-10-17","Statement":[{"Sid":"AppReads","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:role/app"},"Action":"dynamodb:GetItem","Resource":"` + arn + `"}]}`
	foreign := `{"Version":"2012-10-17","Statement":[{"Sid":"SomeoneElses","Effect":"Deny","Principal":"*","Action":"dynamodb:*","Resource":"` + arn + `"}]}`
	runner := func(db *policyDB) *Runner {
		return &Runner{Clients: func(string) Clients { return Clients{DynamoDB: db} }, PollInterval: time.Millisecond}
	}

	t.Run("fence", func(t *testing.T) {
		db := &policyDB{doc: own, rev: "rev-1", land: true}
		var st Step
		require.NoError(t, runner(db).fence(testctx.Bounded(t), &st, region, arn, "", FenceSid))
		assert.True(t, HasFence(db.doc))
		assert.Contains(t, st.Detail, fmt.Sprintf("read back %d times", readBacks))
		assert.Equal(t, []string{restorePolicyCmd(region, arn, own)}, st.Undo)
	})
	t.Run("unfence", func(t *testing.T) {
		fencedDoc, err := withFence(own, arn, "", FenceSid)
		require.NoError(t, err)
		db := &policyDB{doc: fencedDoc, rev: "rev-1", land: true}
		var st Step
		require.NoError(t, runner(db).unfence(testctx.Bounded(t), &st, region, arn, ""))
		assert.False(t, HasFence(db.doc))
		assert.Contains(t, st.Detail, fmt.Sprintf("fence removed from %s, read back %d times", arn, readBacks))
		assert.Equal(t, []string{restorePolicyCmd(region, arn, fencedDoc)}, st.Undo)
	})
	t.Run("unfence without a fence: skipped", func(t *testing.T) {
		db := &policyDB{doc: own, rev: "rev-1", land: true}
		var st Step
		require.NoError(t, runner(db).unfence(testctx.Bounded(t), &st, region, arn, ""))
		assert.Equal(t, StepSkipped, st.Status)
		assert.Contains(t, st.Detail, "carries no fence")
		assert.Empty(t, st.Undo)
	})
	t.Run("unfence of a fence dynops did not write: the step fails", func(t *testing.T) {
		db := &policyDB{doc: foreign, rev: "rev-1", land: true}
		var st Step
		err := runner(db).unfence(testctx.Bounded(t), &st, region, arn, "")
		require.ErrorContains(t, err, "which dynops did not write")
		assert.Empty(t, st.Detail)
		assert.Empty(t, st.Undo)
		assert.Equal(t, foreign, db.doc)
	})
}

// TestFenceConfirmsSelfLockoutOnlyWithBreakGlass_DDB_DR_01: a fence with a
// break-glass role denies every other principal (the caller too) further
// policy changes, so its put confirms the self lockout; a fence without one
// leaves policy changes open and does not.
func TestFenceConfirmsSelfLockoutOnlyWithBreakGlass_DDB_DR_01(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-hoge-user"
	for _, c := range []struct {
		breakGlass string
		confirm    bool
	}{
		{"", false},
		{"arn:aws:iam::111122223333:role/break-glass", true},
	} {
		db := &policyDB{land: true}
		_, _, changed, err := fenceTable(testctx.Bounded(t), db, arn, c.breakGlass, FenceSid, time.Millisecond)
		require.NoError(t, err, "break glass %q", c.breakGlass)
		assert.True(t, changed)
		assert.Equal(t, []bool{c.confirm}, db.confirm, "break glass %q", c.breakGlass)
	}
}

// TestEachOwnerRemovesOnlyItsOwnFence_DDB_DR_01: a table fenced by both dr
// (a failover's or a failback's statement) and migrate (a cutover's): what
// `dynops dr failback` runs removes dr's statements only and says the table
// is still fenced by migrate's; what `dynops migrate rollback` runs
// (UnfenceTable) removes migrate's only; a table's own statement stays
// throughout; and neither removes a fence when only the other's is there.
func TestEachOwnerRemovesOnlyItsOwnFence_DDB_DR_01(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:111122223333:table/prod-hoge-user"
	own := `{"Sid":"TableOwn","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:role/app"},"Action":"dynamodb:GetItem","Resource":"` + arn + `"}`
	for _, drSid := range []string{FenceSid, FailbackFenceSid} {
		for _, first := range []Owner{OwnerDR, OwnerMigrate} {
			t.Run(drSid+" "+string(first)+" first", func(t *testing.T) {
				doc, err := withFence(`{"Version":"2012-10-17","Statement":[`+own+`]}`, arn, "", drSid)
				require.NoError(t, err)
				doc, err = withFence(doc, arn, "", MigrateFenceSid)
				require.NoError(t, err)
				require.True(t, HasOwnFence(doc, OwnerDR))
				require.True(t, HasOwnFence(doc, OwnerMigrate))
				db := &policyDB{land: true, doc: doc, rev: "rev-1"}
				second := map[Owner]Owner{OwnerDR: OwnerMigrate, OwnerMigrate: OwnerDR}[first]

				had, _, detail, err := unfenceTable(testctx.Bounded(t), db, arn, first, "", time.Millisecond)
				require.NoError(t, err)
				assert.True(t, had)
				assert.False(t, HasOwnFence(db.doc, first), "its own fence is gone")
				assert.True(t, HasOwnFence(db.doc, second), "the other owner's fence stays")
				assert.Contains(t, db.doc, `"TableOwn"`)
				held, _ := FenceHolds(db.doc, arn, "")
				assert.True(t, held, "still fenced, by the other owner")
				assert.Contains(t, detail, "still fenced by statement")
				assert.Contains(t, detail, "dynops "+string(second)+"'s")

				// Again: nothing of its own left, the other's stays.
				had, _, detail, err = unfenceTable(testctx.Bounded(t), db, arn, first, "", time.Millisecond)
				require.NoError(t, err)
				assert.False(t, had)
				assert.Contains(t, detail, "the fence of dynops "+string(second))
				assert.True(t, HasOwnFence(db.doc, second))

				had, _, _, err = unfenceTable(testctx.Bounded(t), db, arn, second, "", time.Millisecond)
				require.NoError(t, err)
				assert.True(t, had)
				assert.False(t, HasFence(db.doc))
				assert.Contains(t, db.doc, `"TableOwn"`)
			})
		}
	}
	t.Run("a fence of dr replaces dr's, not migrate's", func(t *testing.T) {
		doc, err := withFence("", arn, "", MigrateFenceSid)
		require.NoError(t, err)
		doc, err = withFence(doc, arn, "", FailbackFenceSid)
		require.NoError(t, err)
		doc, err = WithFence(doc, arn, "")
		require.NoError(t, err)
		sids := []string{}
		for _, st := range mustParse(t, doc).Statement {
			sids = append(sids, statementSid(st))
		}
		assert.ElementsMatch(t, []string{MigrateFenceSid, FenceSid}, sids)
	})
}
