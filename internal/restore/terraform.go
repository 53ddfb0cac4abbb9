package restore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dynops/dynops/internal/guideline"
)

// Adoption returns the Terraform a team adds to adopt the restored table in
// its env root (envs/<env>/, where modules/dynamodb-stack makes one table per
// entry of envs/tables.yaml, named {env}-{product}-{usage}), and how to cut
// over. A `moved` block cannot do the cut-over: a table's name is its
// identity, and renaming it in Terraform replaces the table.
func Adoption(source, target string) string {
	env, product, usage, ok := splitName(source)
	tEnv, tProduct, tUsage, tOK := splitName(target)
	var b strings.Builder
	if !ok || !tOK || env != tEnv || product != tProduct {
		fmt.Fprintf(&b, "# Adopt %s in the Terraform root that owns %s (Terraform >= 1.5):\n", target, source)
		fmt.Fprintf(&b, "import {\n  to = aws_dynamodb_table.restored\n  id = %q\n}\n", target)
		b.WriteString("# then `terraform plan -generate-config-out=restored.tf` writes its resource block.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "# Adopt %s in envs/%s (Terraform >= 1.5):\n", target, env)
	fmt.Fprintf(&b, "# 1. envs/tables.yaml: add an entry %q with the same keys and indexes as %q.\n", tUsage, usage)
	fmt.Fprintf(&b, "# 2. envs/%s/main.tf: add this block; `terraform plan` must show 1 to import and nothing to replace.\n", env)
	fmt.Fprintf(&b, "import {\n  to = module.stack.module.table[%q].aws_dynamodb_table.this\n  id = %q\n}\n", tUsage, target)
	fmt.Fprintf(&b, "# 3. Cut over: point the application's table name at %s. A `moved` block cannot rename a\n", target)
	b.WriteString("#    table (the name is its identity; renaming replaces it). To retire the original from\n")
	fmt.Fprintf(&b, "#    Terraform without deleting it: terraform state rm 'module.stack.module.table[%q]',\n", usage)
	fmt.Fprintf(&b, "#    then remove the %q entry from envs/tables.yaml.\n", usage)
	return b.String()
}

// splitName splits {env}-{product}-{usage} (DDB-NAME-01).
func splitName(name string) (env, product, usage string, ok bool) {
	env = guideline.EnvOf(name)
	if !slices.Contains(guideline.DefaultEnvs(), env) {
		return "", "", "", false
	}
	parts := strings.SplitN(name, "-", 3)
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}
