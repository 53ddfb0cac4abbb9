// Package schemas validates documents dynops writes against the published
// schemas of their formats (testdata/SOURCE.md says where each came from):
// SARIF 2.1.0 with a JSON Schema validator, JUnit XML with xmllint.
package schemas

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func testdata(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", name)
}

// SARIF fails t unless doc is a valid SARIF 2.1.0 log (formats asserted).
func SARIF(t *testing.T, doc []byte) {
	t.Helper()
	if err := ValidateSARIF(doc); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v\n%s", err, doc)
	}
}

// ValidateSARIF returns why doc is not a valid SARIF 2.1.0 log.
func ValidateSARIF(doc []byte) error {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(testdata("sarif-schema-2.1.0.json"))
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// JUnit fails t unless doc validates against the Ant JUnit XSD. It needs
// xmllint (Debian libxml2-utils); without it the test is skipped, saying so.
func JUnit(t *testing.T, doc []byte) {
	t.Helper()
	out, err := ValidateJUnit(doc)
	if err == errNoXmllint {
		t.Skip("xmllint not found: apt-get install libxml2-utils to validate JUnit XML against its XSD")
	}
	if err != nil {
		t.Fatalf("not valid JUnit XML: %v\n%s\n%s", err, out, doc)
	}
}

var errNoXmllint = &os.PathError{Op: "exec", Path: "xmllint", Err: exec.ErrNotFound}

// ValidateJUnit runs xmllint --schema JUnit.xsd over doc.
func ValidateJUnit(doc []byte) (string, error) {
	if _, err := exec.LookPath("xmllint"); err != nil {
		return "", errNoXmllint
	}
	cmd := exec.Command("xmllint", "--noout", "--schema", testdata("JUnit.xsd"), "-")
	cmd.Stdin = bytes.NewReader(doc)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
