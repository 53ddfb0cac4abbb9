package permissions

import (
	"errors"
	"fmt"

	"github.com/aws/smithy-go"
)

// AccessDeniedError is AWS refusing an action for lack of permission, with
// the role that holds the action, so that the operator knows whom to become.
type AccessDeniedError struct {
	Action string // e.g. dynamodb:UpdateTable
	Role   string // OperatorRole or BreakGlassRole
	Err    error
}

func (e *AccessDeniedError) Error() string {
	how := fmt.Sprintf("the %s role (modules/dynamodb-access, {env}-{product}-dynamodb-%s)", e.Role, e.Role)
	if e.Role == BreakGlassRole {
		how += " assumed with MFA (for `dynops dr`, the failover role of modules/dr assumed with MFA also holds the resource-policy actions)"
	}
	return fmt.Sprintf("AWS refused %s: this step needs %s; assume it and run the command again: %v", e.Action, how, e.Err)
}

func (e *AccessDeniedError) Unwrap() error { return e.Err }

// accessDeniedCodes are the error codes AWS services answer a refused
// authorisation with.
var accessDeniedCodes = map[string]bool{
	"AccessDeniedException": true, "AccessDenied": true, "UnauthorizedOperation": true, "AuthorizationError": true,
}

// IsAccessDenied reports whether err is AWS refusing the caller's permission.
func IsAccessDenied(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && accessDeniedCodes[apiErr.ErrorCode()]
}

// Explain returns err unchanged unless AWS refused action for lack of
// permission; then it names the role that holds action (RoleFor).
func Explain(err error, action string) error {
	if err == nil || !IsAccessDenied(err) {
		return err
	}
	var already *AccessDeniedError
	if errors.As(err, &already) {
		return err
	}
	return &AccessDeniedError{Action: action, Role: RoleFor(action), Err: err}
}
