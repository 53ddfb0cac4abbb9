package awsconfig

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strings"

	"github.com/aws/smithy-go"
)

// NotFoundError is an AWS "no such resource" answer, with where dynops
// looked (account, region, endpoint) and the likely fix. It unwraps to the
// SDK's error, so errors.As on the service's own exception type still works.
type NotFoundError struct {
	Code     string // the API error code, e.g. ResourceNotFoundException
	Message  string // the service's message
	Account  string // "" when it could not be read (best effort)
	Region   string
	Endpoint string
	Fix      string
	Debug    bool // keep the raw SDK error chain in Error
	Err      error
}

func (e *NotFoundError) Error() string {
	account := e.Account
	if account == "" {
		account = "unknown (sts:GetCallerIdentity failed)"
	}
	msg := fmt.Sprintf("not found: %s: %s (looked in account %s, region %s, endpoint %s); %s",
		e.Code, e.Message, account, e.Region, e.Endpoint, e.Fix)
	if e.Debug {
		msg += " [raw: " + e.Err.Error() + "]"
	}
	return msg
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// UnreachableError is a connection that could not be made at all.
type UnreachableError struct {
	Endpoint string
	Region   string
	Err      error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot connect to %s (region %s): %v; check --endpoint-url, --region and the network", e.Endpoint, e.Region, rootCause(e.Err))
}

func (e *UnreachableError) Unwrap() error { return e.Err }

func rootCause(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe
	}
	return err
}

// notFoundCodes are the API error codes that mean "there is no such thing".
var notFoundCodes = map[string]bool{
	"ResourceNotFoundException": true, "TableNotFoundException": true,
	"ExportNotFoundException": true, "ImportNotFoundException": true,
	"QueueDoesNotExist": true, "AWS.SimpleQueueService.NonExistentQueue": true,
	"NoSuchBucket": true, "NoSuchKey": true, "NotFound": true,
	"ParameterNotFound": true, "NoSuchEntity": true, "NoSuchHostedZone": true,
	"ResourceNotFound": true,
}

// translate turns the errors an operator must act on into ones that say
// where dynops looked; other errors pass unchanged.
func (g *guard) translate(ctx context.Context, service, op, endpoint, region string, params any, err error) error {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && notFoundCodes[apiErr.ErrorCode()] {
		account := ""
		if g.account != nil && !(service == "STS") {
			account = g.account(ctx)
		}
		return &NotFoundError{Code: apiErr.ErrorCode(), Message: apiErr.ErrorMessage(), Account: account,
			Region: region, Endpoint: endpoint, Fix: fixFor(service, region, params), Debug: g.debug, Err: err}
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return &UnreachableError{Endpoint: endpoint, Region: region, Err: err}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return &UnreachableError{Endpoint: endpoint, Region: region, Err: err}
	}
	return err
}

// fixFor is the likely fix of a not-found answer from service.
func fixFor(service, region string, params any) string {
	switch service {
	case "SQS":
		if qr := QueueURLRegion(stringField(params, "QueueUrl")); qr != "" && qr != region {
			return fmt.Sprintf("the queue URL is in region %s, not %s: pass --region %s (or the URL of the queue in %s)", qr, region, qr, region)
		}
		return "check the queue URL (it names its account and region), --region and --profile"
	case "DynamoDB":
		return "check the table (export, import) name, --region and --profile (the account it lives in)"
	case "S3":
		return "check the bucket and key, and that the bucket is in this account (--profile)"
	case "Lambda":
		return "check the function name and --region (a function is regional), and --profile"
	case "SSM":
		return "check the parameter name, --region and --profile"
	}
	return "check the name, --region and --profile"
}

// QueueURLRegion returns the region named in an SQS queue URL
// (https://sqs.eu-west-1.amazonaws.com/..., https://eu-west-1.queue.amazonaws.com/...),
// or "" when the URL names none (an emulator's URL).
func QueueURLRegion(queueURL string) string {
	u, err := url.Parse(queueURL)
	if err != nil {
		return ""
	}
	labels := strings.Split(u.Hostname(), ".")
	if len(labels) < 4 || labels[len(labels)-2] != "amazonaws" {
		return ""
	}
	if labels[0] == "sqs" {
		return labels[1]
	}
	if labels[1] == "queue" {
		return labels[0]
	}
	return ""
}

// stringField returns the *string field name of the struct params points to, or "".
func stringField(params any, name string) string {
	v := reflect.ValueOf(params)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return ""
	}
	f := v.Elem().FieldByName(name)
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.String {
		return ""
	}
	return f.Elem().String()
}

// QueueRegion returns the region to call for an SQS queue URL: a queue
// lives in one region, and asking another for it only answers "no such
// queue". note says what was switched ("" when nothing was).
func QueueRegion(region, queueURL string) (string, string) {
	r := QueueURLRegion(queueURL)
	if r == "" || r == region {
		return region, ""
	}
	return r, fmt.Sprintf("note: the queue URL is in %s, not %s: using %s for it\n", r, region, r)
}
