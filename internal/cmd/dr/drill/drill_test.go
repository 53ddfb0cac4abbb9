package drill

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dynops/dynops/internal/cmd/factory"
	"github.com/dynops/dynops/internal/failover"
)

// TestTemplateRefusalIsAUsageError: a pause drill refused for its template
// (another account, region, table or action, or a started experiment that
// differs from the checked template) exits 2 and keeps its cause; any other
// failure of the drill stays a failure (exit 1).
func TestTemplateRefusalIsAUsageError(t *testing.T) {
	refused := fmt.Errorf("%w: experiment template EXT1 targets arn:aws:dynamodb:eu-central-1:999999999999:table/dev-x: account 999999999999", failover.ErrTemplateRefused)
	got := refusal(refused)
	if !factory.IsUsageError(got) {
		t.Errorf("refusal(%v) is not a usage error (exit 2)", refused)
	}
	if !errors.Is(got, failover.ErrTemplateRefused) || got.Error() != refused.Error() {
		t.Errorf("refusal(%v) = %v: the cause and its text must stay", refused, got)
	}
	other := errors.New("reading experiment template EXT1 in eu-central-1: throttled")
	if factory.IsUsageError(refusal(other)) {
		t.Errorf("refusal(%v) is a usage error: only a refused template exits 2", other)
	}
}
