package notify

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
)

// SSMAPI is the part of the SSM client ResolveSecret uses.
type SSMAPI interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// SecretsAPI is the part of the Secrets Manager client ResolveSecret uses.
type SecretsAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// ResolveSecret reads the secret ref names: ssm:/PATH, an SSM parameter
// that must be a SecureString (read with decryption), or
// secretsmanager:NAME (its SecretString). Errors name ref, never the value.
func ResolveSecret(ctx context.Context, ref string, ssmc SSMAPI, sm SecretsAPI) (string, error) {
	var v string
	switch {
	case strings.HasPrefix(ref, "ssm:"):
		name := strings.TrimPrefix(ref, "ssm:")
		out, err := ssmc.GetParameter(ctx, &ssm.GetParameterInput{Name: &name, WithDecryption: aws.Bool(true)})
		if err != nil {
			return "", fmt.Errorf("reading %s (ssm GetParameter %s): %w", ref, name, err)
		}
		if out.Parameter == nil || out.Parameter.Type != ssmtypes.ParameterTypeSecureString {
			t := ssmtypes.ParameterType("none")
			if out.Parameter != nil {
				t = out.Parameter.Type
			}
			return "", fmt.Errorf("%s is a %s parameter: a webhook URL is a secret, store it as a SecureString (aws ssm put-parameter --type SecureString --overwrite --name %s ...)", ref, t, name)
		}
		v = aws.ToString(out.Parameter.Value)
	case strings.HasPrefix(ref, "secretsmanager:"):
		name := strings.TrimPrefix(ref, "secretsmanager:")
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &name})
		if err != nil {
			return "", fmt.Errorf("reading %s (secretsmanager GetSecretValue %s): %w", ref, name, err)
		}
		v = aws.ToString(out.SecretString)
	default:
		return "", fmt.Errorf("%q is not where a secret is kept: give ssm:/PATH or secretsmanager:NAME", ref)
	}
	if v = strings.TrimSpace(v); v == "" {
		return "", fmt.Errorf("%s is empty: put the webhook URL there", ref)
	}
	return v, nil
}
