// Package examples applies every module example the emulator can hold and
// plans it again: a reviewer must see an empty second plan (issue: day-2
// plans that reviewers can trust). The examples a plan-level suite already
// covers offline are planned there; this suite is the apply side.
package examples

import (
	"testing"

	"github.com/dynops/dynops/test/helpers/harness"
)

var target *harness.Target

func TestMain(m *testing.M) { harness.Main(m, &target) }
