package awsconfig

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestCheckRegion: every partition's regions pass, as does a region newer
// than this list that follows its partition's pattern; names no partition
// has are refused naming where the region came from.
func TestCheckRegion(t *testing.T) {
	for _, ok := range []string{"eu-west-1", "us-east-1", "ap-southeast-7", "mx-central-1", "il-central-1", "cn-northwest-1",
		"us-gov-west-1", "us-iso-east-1", "us-isob-east-1", "eu-isoe-west-1", "us-isof-south-1", "eusc-de-east-1", "eu-west-9"} {
		if err := CheckRegion(ok, "--region"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"mars-north-9", "eu-west", "EU-WEST-1", "euwest1", "local", "eu-west-1a", " eu-west-1", "xx-east-1"} {
		err := CheckRegion(bad, "--region")
		var re *RegionError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), `--region "`+bad+`" is not an AWS region`) || !strings.Contains(err.Error(), "eu-west-1") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestLoadRefusesAnUnknownRegionFromTheEnvironment: the region of
// AWS_REGION is checked too, and the error says it came from there.
func TestLoadRefusesAnUnknownRegionFromTheEnvironment(t *testing.T) {
	t.Setenv("AWS_REGION", "mars-north-9")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	_, err := Load(context.Background(), Options{EndpointURL: "http://127.0.0.1:1"})
	var re *RegionError
	if !errors.As(err, &re) || re.Source != "AWS_REGION" || !strings.Contains(err.Error(), `AWS_REGION "mars-north-9" is not an AWS region`) {
		t.Fatalf("err = %v", err)
	}
}
