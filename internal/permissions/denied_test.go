package permissions_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/dynops/dynops/internal/permissions"
)

// TestExplainNamesTheRole_DDB_SEC_01: when AWS refuses an action for lack of
// permission, the error names the role that holds it; other errors pass through.
func TestExplainNamesTheRole_DDB_SEC_01(t *testing.T) {
	denied := func(code string) error {
		return fmt.Errorf("operation error: %w", &smithy.GenericAPIError{Code: code, Message: "not authorized"})
	}
	for _, tc := range []struct {
		name, action string
		err          error
		wantRole     string // "" = passed through unchanged
	}{
		{"UpdateTable refused", "dynamodb:UpdateTable", denied("AccessDeniedException"), permissions.BreakGlassRole},
		{"UpdateContinuousBackups refused", "dynamodb:UpdateContinuousBackups", denied("AccessDeniedException"), permissions.BreakGlassRole},
		{"PutResourcePolicy refused", "dynamodb:PutResourcePolicy", denied("AccessDeniedException"), permissions.BreakGlassRole},
		{"DeleteResourcePolicy refused", "dynamodb:DeleteResourcePolicy", denied("AccessDenied"), permissions.BreakGlassRole},
		{"GetItem refused", "dynamodb:GetItem", denied("AccessDeniedException"), permissions.OperatorRole},
		{"s3 refused", "s3:PutObject", denied("AccessDenied"), permissions.OperatorRole},
		{"throttled", "dynamodb:UpdateTable", denied("ThrottlingException"), ""},
		{"not found", "dynamodb:UpdateTable", denied("ResourceNotFoundException"), ""},
		{"plain error", "dynamodb:UpdateTable", errors.New("boom"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := permissions.Explain(tc.err, tc.action)
			if !errors.Is(got, tc.err) {
				t.Fatalf("Explain lost the cause: %v", got)
			}
			var ad *permissions.AccessDeniedError
			if tc.wantRole == "" {
				if errors.As(got, &ad) {
					t.Fatalf("Explain marked %v as access denied", tc.err)
				}
				return
			}
			if !errors.As(got, &ad) || ad.Role != tc.wantRole {
				t.Fatalf("Explain(%v) = %v, want role %s", tc.err, got, tc.wantRole)
			}
			for _, want := range []string{tc.action, tc.wantRole, "assume it"} {
				if !strings.Contains(got.Error(), want) {
					t.Errorf("message %q does not name %q", got.Error(), want)
				}
			}
			// Only the break-glass role is assumed with MFA: telling an
			// operator to bring MFA for GetItem sends them to the wrong role.
			if mfa := strings.Contains(got.Error(), "MFA"); mfa != (tc.wantRole == permissions.BreakGlassRole) {
				t.Errorf("message %q: mentions MFA = %v, want %v (role %s)", got.Error(), mfa, !mfa, tc.wantRole)
			}
			if permissions.Explain(got, tc.action) != got {
				t.Error("Explain wrapped twice")
			}
		})
	}
	if permissions.Explain(nil, "dynamodb:UpdateTable") != nil {
		t.Error("Explain(nil) is not nil")
	}
}

// TestBreakGlassOnlyOutsideTheOperatorSet_DDB_SEC_01: the rendered operator
// statements never hold an action that can switch protection off.
func TestBreakGlassOnlyOutsideTheOperatorSet_DDB_SEC_01(t *testing.T) {
	b, err := permissions.Render(permissions.Commands())
	if err != nil {
		t.Fatal(err)
	}
	var doc permissions.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range doc.Statements {
		for _, a := range s.Actions {
			if permissions.RoleFor(a) != permissions.OperatorRole {
				t.Errorf("operator statement %s holds break-glass action %s", s.Scope, a)
			}
		}
	}
	var bg []string
	for _, s := range doc.BreakGlass {
		bg = append(bg, s.Actions...)
	}
	for _, a := range permissions.BreakGlass() {
		if !strings.Contains(strings.Join(bg, ","), a) {
			t.Errorf("break_glass lacks %s (a command needs it)", a)
		}
	}
}
