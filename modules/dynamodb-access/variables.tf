################################################################################
# Scope (DDB-SEC-03)
################################################################################

variable "env" {
  description = "Environment; every DynamoDB ARN in every policy is scoped to `table/{env}-*` (DDB-SEC-03)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9]*$", var.env))
    error_message = "DDB-SEC-03: env must be lower case letters and digits (e.g. \"prod\"); it is the table name prefix the policies are scoped to."
  }
}

variable "product" {
  description = "Product that owns the tables; policy and role names are `{env}-{product}-dynamodb-{role}` (DDB-NAME-01)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]+(-[a-z0-9]+)*$", var.product))
    error_message = "DDB-NAME-01: product must be lower case words joined by '-' (e.g. \"hoge\")."
  }
}

variable "account_id" {
  description = "AWS account ID the tables live in, for the ARNs. An input, not a data source, so that plans need no AWS call."
  type        = string

  validation {
    condition     = can(regex("^[0-9]{12}$", var.account_id))
    error_message = "DDB-SEC-03: account_id must be the 12-digit AWS account ID of the tables (e.g. \"123456789012\")."
  }
}

variable "region" {
  description = "Region of the tables; null means the provider's region."
  type        = string
  default     = null
}

################################################################################
# Policies (DDB-SEC-01, DDB-SEC-02)
################################################################################

variable "application_tables" {
  description = "Tables the owning application reads and writes (items, indexes, DescribeTable; no Scan). Empty: no application policy."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for t in var.application_tables : startswith(t, "${var.env}-")])
    error_message = "DDB-SEC-03: every application_tables entry must be a table of this env (name starting with \"<env>-\"); a policy never reaches another environment's tables."
  }
}

variable "tenant_tables" {
  description = <<-EOT
    Multi-tenant tables, keyed by table name (DDB-SEC-02). The tenant policy allows item actions only where the partition key is
    `key_prefix` followed by the session's tenant tag (e.g. `TENANT#t1`), on the table and its indexes, with Scan and PartiQL denied.
    `index_key_delimiter` (e.g. `#`): GSI partition keys that carry more after the tenant id (`TENANT#t1#STATUS#open`) are queryable too;
    the trust policy then refuses tenant ids containing the delimiter, so `t1` never matches `t1#x` or `t10`.
  EOT
  type = map(object({
    key_prefix          = optional(string, "")
    index_key_delimiter = optional(string)
  }))
  default = {}

  validation {
    condition     = alltrue([for t in keys(var.tenant_tables) : startswith(t, "${var.env}-")])
    error_message = "DDB-SEC-03: every tenant_tables key must be a table of this env (name starting with \"<env>-\")."
  }

  validation {
    condition     = alltrue([for t in values(var.tenant_tables) : !can(regex("[*?$]", t.key_prefix)) && (t.index_key_delimiter == null || can(regex("^[^*?$A-Za-z0-9]$", coalesce(t.index_key_delimiter, "#"))))])
    error_message = "DDB-SEC-02: key_prefix must not contain * ? or $, and index_key_delimiter must be one punctuation character such as \"#\" (letters and digits could be part of a tenant id)."
  }
}

variable "tenant_tag_key" {
  description = "Session tag that carries the tenant id; the tenant policy binds dynamodb:LeadingKeys to `$${aws:PrincipalTag/<key>}` (DDB-SEC-02)."
  type        = string
  default     = "tenant_id"

  validation {
    condition     = can(regex("^[A-Za-z0-9_.:/=+@-]{1,128}$", var.tenant_tag_key))
    error_message = "DDB-SEC-02: tenant_tag_key must be a valid IAM tag key (letters, digits, _ . : / = + @ -), e.g. \"tenant_id\"."
  }
}

################################################################################
# Roles
################################################################################

variable "create_roles" {
  description = "Also create one IAM role per policy, assumable by trusted_principal_arns (the tenant role only with the tenant tag)."
  type        = bool
  default     = false

  validation {
    condition     = !var.create_roles || length(var.trusted_principal_arns) > 0
    error_message = "DDB-SEC-01: create_roles = true needs trusted_principal_arns (who may assume the roles); or keep create_roles = false and attach the policies yourself."
  }
}

variable "trusted_principal_arns" {
  description = "Principals (IAM roles, users or account roots) allowed to assume the roles. Required when create_roles = true."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for p in var.trusted_principal_arns : can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:(root|role/.+|user/.+)$", p))])
    error_message = "DDB-SEC-01: trusted_principal_arns must be IAM ARNs (arn:aws:iam::ACCOUNT:role/NAME, user/NAME or root)."
  }
}

variable "permissions_boundary_arn" {
  description = "Optional permissions boundary policy ARN set on every role created."
  type        = string
  default     = null

  validation {
    condition     = var.permissions_boundary_arn == null || can(regex("^arn:aws[a-z-]*:iam::([0-9]{12}|aws):policy/.+$", coalesce(var.permissions_boundary_arn, "x")))
    error_message = "DDB-SEC-01: permissions_boundary_arn must be an IAM policy ARN (arn:aws:iam::ACCOUNT:policy/NAME), or null."
  }
}

variable "max_session_duration" {
  description = "Maximum session duration of the roles, in seconds (3600 to 43200)."
  type        = number
  default     = 3600

  validation {
    condition     = var.max_session_duration >= 3600 && var.max_session_duration <= 43200
    error_message = "max_session_duration must be between 3600 and 43200 seconds."
  }
}

variable "tags" {
  description = "Tags on every policy and role."
  type        = map(string)
  default     = {}
}
