package awsconfig

import (
	"fmt"
	"os"
	"regexp"
)

// partitions are the AWS partitions' region name patterns and a few of
// their regions, as the SDK's endpoint rules have them
// (aws-sdk-go-v2 internal/endpoints/awsrulesfn/partitions.json, "regionRegex";
// not importable: the package is internal). A region that matches no
// partition cannot be answered by any AWS endpoint.
var partitions = []struct {
	id      string
	pattern *regexp.Regexp
	example string
}{
	{"aws", regexp.MustCompile(`^(us|eu|ap|sa|ca|me|af|il|mx)\-\w+\-\d+$`), "eu-west-1, us-east-1, ap-northeast-1"},
	{"aws-cn", regexp.MustCompile(`^cn\-\w+\-\d+$`), "cn-north-1"},
	{"aws-us-gov", regexp.MustCompile(`^us\-gov\-\w+\-\d+$`), "us-gov-west-1"},
	{"aws-iso", regexp.MustCompile(`^us\-iso\-\w+\-\d+$`), "us-iso-east-1"},
	{"aws-iso-b", regexp.MustCompile(`^us\-isob\-\w+\-\d+$`), "us-isob-east-1"},
	{"aws-iso-e", regexp.MustCompile(`^eu\-isoe\-\w+\-\d+$`), "eu-isoe-west-1"},
	{"aws-iso-f", regexp.MustCompile(`^us\-isof\-\w+\-\d+$`), "us-isof-south-1"},
	{"aws-eusc", regexp.MustCompile(`^eusc\-(de)\-\w+\-\d+$`), "eusc-de-east-1"},
}

// RegionError is a region name no AWS partition has: bad input (exit 2),
// refused before any call (an endpoint would only time out or answer
// something unrelated).
type RegionError struct {
	Region string
	Source string // --region, AWS_REGION, AWS_DEFAULT_REGION, or the profile
}

func (e *RegionError) Error() string {
	msg := fmt.Sprintf("%s %q is not an AWS region: no partition names its regions like that (", e.Source, e.Region)
	for i, p := range partitions[:3] {
		if i > 0 {
			msg += "; "
		}
		msg += p.id + ": " + p.example
	}
	return msg + "); pass --region with one of your account's regions (aws ec2 describe-regions lists them); nothing was sent"
}

// CheckRegion refuses a region name that matches no AWS partition's
// pattern. A name that matches one but is newer than the SDK passes:
// AWS answers for it.
func CheckRegion(region, source string) error {
	for _, p := range partitions {
		if p.pattern.MatchString(region) {
			return nil
		}
	}
	return &RegionError{Region: region, Source: source}
}

// regionSource says where the run's region came from.
func regionSource(flag, profile string) string {
	switch {
	case flag != "":
		return "--region"
	case os.Getenv("AWS_REGION") != "":
		return "AWS_REGION"
	case os.Getenv("AWS_DEFAULT_REGION") != "":
		return "AWS_DEFAULT_REGION"
	}
	return "the region of " + profileName(profile)
}
