# tflint for every module, example and env root: `make lint` runs
#   tflint --recursive --config "$PWD/.tflint.hcl"
# The aws ruleset is built from the Go module proxy by scripts/setup.sh and
# found through TFLINT_PLUGIN_DIR, so no GitHub download is needed.
config {
  call_module_type = "local"
}

plugin "terraform" {
  enabled = true
  preset  = "all"
}

plugin "aws" {
  enabled = true
}

# Resource, variable, output, local and module names are snake_case.
rule "terraform_naming_convention" {
  enabled = true
  format  = "snake_case"
}

# Every variable and output is typed and described (terraform-aws-modules).
rule "terraform_typed_variables" {
  enabled = true
}

rule "terraform_documented_variables" {
  enabled = true
}

rule "terraform_documented_outputs" {
  enabled = true
}

# Providers and terraform itself are version-constrained.
rule "terraform_required_providers" {
  enabled = true
}

rule "terraform_required_version" {
  enabled = true
}

rule "terraform_standard_module_structure" {
  enabled = true
}
