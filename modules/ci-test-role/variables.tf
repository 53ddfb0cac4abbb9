variable "github_repository" {
  description = "The repository whose workflow assumes the role, `OWNER/NAME`; the trust policy accepts only its tokens."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$", var.github_repository))
    error_message = "DDB-SEC-01: github_repository must be OWNER/NAME (e.g. \"hoge-inc/dynops\"), no wildcard: the role trusts one repository."
  }
}

variable "github_environment" {
  description = "The GitHub environment of the job (`environment:` in .github/workflows/test-aws.yml); the trust policy requires `sub` = `repo:OWNER/NAME:environment:ENV`, so only jobs in that environment (and its protection rules) get credentials."
  type        = string
  default     = "aws-sandbox"

  validation {
    condition     = can(regex("^[A-Za-z0-9._-]+$", var.github_environment))
    error_message = "DDB-SEC-01: github_environment must be one environment name (letters, digits, '.', '_', '-'), no wildcard."
  }
}

variable "name" {
  description = "Name of the role, its policy and (with `-boundary`) the permissions boundary of the roles it creates."
  type        = string
  default     = "dynops-ci-test"

  validation {
    condition     = can(regex("^[A-Za-z0-9+=,.@_-]{1,55}$", var.name))
    error_message = "DDB-SEC-01: name must be 1 to 55 IAM name characters (the boundary adds \"-boundary\")."
  }
}

variable "account_id" {
  description = "AWS account ID of the sandbox account, for the ARNs. An input, not a data source, so that plans need no AWS call."
  type        = string

  validation {
    condition     = can(regex("^[0-9]{12}$", var.account_id))
    error_message = "DDB-SEC-03: account_id must be the 12-digit ID of the sandbox account the tests run in."
  }
}

variable "partition" {
  description = "AWS partition of the ARNs."
  type        = string
  default     = "aws"
}

variable "resource_prefix" {
  description = "Prefix of every resource the test suite creates (`dev-t<random>-...`, test/helpers/harness.UniqueID); the policy allows changes only to resources named with it (DDB-SEC-03)."
  type        = string
  default     = "dev-t"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{2,}$", var.resource_prefix))
    error_message = "DDB-SEC-03: resource_prefix must be at least 3 lower case letters, digits or '-' (e.g. \"dev-t\"), so the policy never reaches every resource."
  }
}

variable "create_oidc_provider" {
  description = "Create the account's GitHub OIDC provider (token.actions.githubusercontent.com). Set false when the account has one already and pass its ARN in oidc_provider_arn."
  type        = bool
  default     = true
}

variable "oidc_provider_arn" {
  description = "ARN of an existing GitHub OIDC provider, when create_oidc_provider is false."
  type        = string
  default     = null
}

variable "max_session_duration" {
  description = "Longest session the workflow may ask for, in seconds (the suite against AWS takes up to two hours)."
  type        = number
  default     = 7200

  validation {
    condition     = var.max_session_duration >= 3600 && var.max_session_duration <= 43200
    error_message = "DDB-SEC-01: max_session_duration must be 3600 to 43200 seconds."
  }
}

variable "tags" {
  description = "Tags for the role, the policy and the OIDC provider."
  type        = map(string)
  default     = {}
}

variable "github_workflow_refs" {
  description = "The workflow files and refs whose jobs may assume the role (the token's `job_workflow_ref`, `OWNER/NAME/.github/workflows/FILE@refs/heads/BRANCH`); null: test-aws.yml on main. Protect that branch (docs/iam-roles.md)."
  type        = list(string)
  default     = null

  validation {
    condition     = try(alltrue([for r in var.github_workflow_refs : can(regex("^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+/\\.github/workflows/[A-Za-z0-9._-]+\\.ya?ml@refs/(heads|tags)/[A-Za-z0-9._/-]+$", r))]), var.github_workflow_refs == null)
    error_message = "DDB-SEC-01: each github_workflow_refs entry must be OWNER/NAME/.github/workflows/FILE.yml@refs/heads/BRANCH (or refs/tags/TAG), no wildcard: the role trusts named workflows at named refs."
  }
}

variable "route53_zone_ids" {
  description = "IDs of the Route 53 hosted zones the suite may change records in (records named with resource_prefix only). Empty: no Route 53 changes; the suite never creates or deletes a zone."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for z in var.route53_zone_ids : can(regex("^Z[A-Z0-9]{1,31}$", z))])
    error_message = "DDB-SEC-03: route53_zone_ids must be hosted zone IDs (Z...), without the /hostedzone/ prefix."
  }
}

variable "route53_health_checks_reason" {
  description = "Why the suite may create, change and delete Route 53 health checks. IAM cannot scope health checks (no names, no tags in conditions), so this reaches every health check of the account: give it only in an account of its own. null: no health checks."
  type        = string
  default     = null

  validation {
    condition     = try(length(trimspace(var.route53_health_checks_reason)) >= 10, var.route53_health_checks_reason == null)
    error_message = "DDB-SEC-01: route53_health_checks_reason must say why (at least 10 characters), e.g. \"sandbox account used only by the dynops suite\", or be null."
  }
}

variable "attachable_policy_arns" {
  description = "Managed policies (besides the suite's own prefixed ones) the suite may attach to the roles it creates; modules/dr attaches the two AWS Backup service-role policies."
  type        = list(string)
  default     = ["arn:aws:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup", "arn:aws:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForRestores"]

  validation {
    condition     = alltrue([for a in var.attachable_policy_arns : can(regex("^arn:aws[a-z-]*:iam::(aws|[0-9]{12}):policy/.+$", a)) && !can(regex("(?i)(AdministratorAccess|IAMFullAccess|PowerUserAccess|\\*)", a))])
    error_message = "DDB-SEC-01: attachable_policy_arns must be IAM policy ARNs, none of them AdministratorAccess, IAMFullAccess, PowerUserAccess or a wildcard."
  }
}
