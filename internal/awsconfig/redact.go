package awsconfig

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/logging"
)

// redacted replaces a secret in the --debug log.
const redacted = "[REDACTED]"

// redactions are the places a request or response carries a credential:
// the signing headers, presigned query parameters, and the credentials STS
// and SSO return in a body.
var redactions = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?im)^(Authorization|X-Amz-Security-Token|X-Amz-Credential|X-Amz-Signature)(\s*:\s*)[^\r\n]*`), "${1}${2}" + redacted},
	{regexp.MustCompile(`(?i)(X-Amz-(?:Credential|Signature|Security-Token)=)[^&\s"]*`), "${1}" + redacted},
	{regexp.MustCompile(`(?i)(<(?:SecretAccessKey|SessionToken|AccessKeyId)>)[^<]*`), "${1}" + redacted},
	{regexp.MustCompile(`(?i)("(?:SecretAccessKey|SessionToken|AccessKeyId|accessToken)"\s*:\s*")[^"]*`), "${1}" + redacted},
}

// redactor holds the credential values of one run, to take out of the log
// wherever they appear.
type redactor struct {
	mu     sync.Mutex
	values map[string]bool
}

func newRedactor() *redactor {
	r := &redactor{values: map[string]bool{}}
	r.add(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))
	return r
}

func (r *redactor) add(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		if len(v) >= 4 {
			r.values[v] = true
		}
	}
}

func (r *redactor) redact(s string) string {
	for _, x := range redactions {
		s = x.re.ReplaceAllString(s, x.with)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for v := range r.values {
		s = strings.ReplaceAll(s, v, redacted)
	}
	return s
}

// redactingLogger is the --debug log: the SDK's request and response dumps
// with every credential taken out.
type redactingLogger struct {
	out     logging.Logger
	secrets *redactor
}

func (l redactingLogger) Logf(c logging.Classification, format string, v ...any) {
	l.out.Logf(c, "%s", l.secrets.redact(fmt.Sprintf(format, v...)))
}

// recordingProvider hands the credentials it retrieves to the redactor
// before any request signed with them is logged.
type recordingProvider struct {
	inner   aws.CredentialsProvider
	secrets *redactor
}

func (p recordingProvider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := p.inner.Retrieve(ctx)
	if err == nil {
		p.secrets.add(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)
	}
	return c, err
}
