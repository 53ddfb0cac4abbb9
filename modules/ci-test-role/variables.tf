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
  description = "Name of the role and its policy."
  type        = string
  default     = "dynops-ci-test"
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
