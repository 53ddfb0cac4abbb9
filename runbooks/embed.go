// Package runbooks embeds the on-call runbooks (the markdown files of this
// directory) in the dynops binary, so `dynops runbook` needs nothing else.
package runbooks

import "embed"

// FS holds every runbook: NAME.md, plus README.md (the format, not a runbook).
//
//go:embed *.md
var FS embed.FS
