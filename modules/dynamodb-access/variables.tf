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

variable "product_scope" {
  description = "Scope every resource to `{env}-{product}-*` instead of `{env}-*` (DDB-SEC-03): the policies then reach only this product's tables, buckets, queues, functions, alarms and DR pointers."
  type        = bool
  default     = false
}

variable "health_check_ids" {
  description = "Route 53 health check IDs of this env (modules/dr output `health_check_ids`) that the operator may read and invert (`dynops dr`). Health check ARNs hold only an ID, so the operator reaches exactly these; empty: no Route 53 rights."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for id in var.health_check_ids : can(regex("^[0-9a-f-]{36}$", id))])
    error_message = "DDB-SEC-03: health_check_ids must be Route 53 health check IDs (e.g. \"abcdef12-3456-7890-abcd-ef1234567890\"), not ARNs or wildcards."
  }
}

variable "fis_experiment_template_ids" {
  description = "AWS FIS experiment template IDs of this env (modules/dr output `fis_pause_replication_template_id`) that the operator may start (`dynops dr drill --pause-replication`); it may read and stop the experiments they run. Template ARNs hold only an ID, so the operator starts exactly these; empty: it starts none."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for id in var.fis_experiment_template_ids : can(regex("^[A-Za-z0-9]+$", id))])
    error_message = "DDB-SEC-03: fis_experiment_template_ids must be experiment template IDs (e.g. \"EXT1a2b3c4d5e6f7\"), not ARNs or wildcards."
  }
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
    `index_key_delimiter` (e.g. `#`): GSI partition keys that carry more after the tenant id (`TENANT#t1#STATUS#open`) are queryable too.
    It must be a character a tag value cannot hold (tag values hold letters, digits, spaces and `_ . : / = + - @`), so that the tenant id
    ends at the delimiter: `t1` never matches `t1#x` or `t10`, and `acme` never `acme-eu`. Both the policy and the trust policy refuse a tag with it.
    `cross_tenant_indexes`: index name => reason, for GSIs whose partition key is not the tenant key attribute (DDB-SEC-02 index keys:
    LeadingKeys does not bound them, a tenant could write another tenant's key into them). The tenant role is denied every such index.
  EOT
  type = map(object({
    key_prefix           = optional(string, "")
    index_key_delimiter  = optional(string)
    cross_tenant_indexes = optional(map(string), {})
  }))
  default = {}

  validation {
    condition     = alltrue([for t in keys(var.tenant_tables) : startswith(t, "${var.env}-")])
    error_message = "DDB-SEC-03: every tenant_tables key must be a table of this env (name starting with \"<env>-\")."
  }

  validation {
    condition     = alltrue([for t in values(var.tenant_tables) : !can(regex("[*?$]", t.key_prefix))])
    error_message = "DDB-SEC-02: key_prefix must not contain * ? or $ (IAM wildcards and policy variables), e.g. \"TENANT#\"."
  }

  validation {
    # Tag values may hold letters, digits, spaces and _ . : / = + - @ ; * ? $ are IAM wildcards/variables.
    condition     = alltrue([for t in values(var.tenant_tables) : t.index_key_delimiter == null || can(regex("^[#|~!%^&,;<>(){}\\[\\]]$", coalesce(t.index_key_delimiter, "#")))])
    error_message = "DDB-SEC-02: index_key_delimiter must be one character a tag value cannot hold, one of # | ~ ! % ^ & , ; < > ( ) { } [ ] (tag values may hold letters, digits, spaces and _ . : / = + - @, so tenant \"acme\" would reach \"acme-eu\"); e.g. \"#\"."
  }

  validation {
    condition     = alltrue(flatten([for t in values(var.tenant_tables) : [for i, why in t.cross_tenant_indexes : can(regex("^gsi[1-9][0-9]*$", i)) && length(trimspace(why)) > 0]]))
    error_message = "DDB-SEC-02: cross_tenant_indexes must map GSI names (gsi1, gsi2, ...) to the reason the index is not tenant-scoped, e.g. { gsi3 = \"admin reporting across tenants\" }."
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

variable "create_policies" {
  description = "Create the IAM policies. false: only render them (output `policy_documents`), as modules/dynops-runner does for the role its task runs as."
  type        = bool
  default     = true

  validation {
    condition     = var.create_policies || !var.create_roles
    error_message = "DDB-SEC-01: create_roles = true attaches the policies this module creates: keep create_policies = true with it."
  }
}

variable "create_roles" {
  description = "Also create one IAM role per policy. Each role trusts its own principals (role_trusted_principal_arns, else trusted_principal_arns); the tenant role trusts only role_trusted_principal_arns[\"tenant\"] and requires the tenant tag."
  type        = bool
  default     = false

  validation {
    condition     = !var.create_roles || length(var.trusted_principal_arns) > 0 || length(var.role_trusted_principal_arns) > 0
    error_message = "DDB-SEC-01: create_roles = true needs trusted_principal_arns or role_trusted_principal_arns (who may assume the roles); or keep create_roles = false and attach the policies yourself."
  }
}

variable "trusted_principal_arns" {
  description = "Principals allowed to assume every created role except the tenant role (the tenant role trusts only role_trusted_principal_arns[\"tenant\"]); a role listed in role_trusted_principal_arns trusts that list instead."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for p in var.trusted_principal_arns : can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:(root|role/.+|user/.+)$", p))])
    error_message = "DDB-SEC-01: trusted_principal_arns must be IAM ARNs (arn:aws:iam::ACCOUNT:role/NAME, user/NAME or root)."
  }
}

variable "role_trusted_principal_arns" {
  description = <<-EOT
    Principals allowed to assume each created role, keyed by role: application, tenant, investigator, data-patch,
    dynops-operator, dynops-break-glass. A role not listed trusts trusted_principal_arns, except the tenant role,
    which trusts only role_trusted_principal_arns["tenant"]. A principal trusted by the tenant role is refused in
    any other role's list (a tenant caller must not reach a role without the tenant key condition).
  EOT
  type        = map(list(string))
  default     = {}

  validation {
    condition     = alltrue([for k in keys(var.role_trusted_principal_arns) : contains(["application", "tenant", "investigator", "data-patch", "dynops-operator", "dynops-break-glass"], k)])
    error_message = "DDB-SEC-01: role_trusted_principal_arns keys must be role names: application, tenant, investigator, data-patch, dynops-operator, dynops-break-glass."
  }
  validation {
    condition     = alltrue(flatten([for k, ps in var.role_trusted_principal_arns : [for p in ps : can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:(root|role/.+|user/.+)$", p))]]))
    error_message = "DDB-SEC-01: role_trusted_principal_arns values must be IAM ARNs (arn:aws:iam::ACCOUNT:role/NAME, user/NAME or root)."
  }
}

variable "account_root_trust_reason" {
  description = "Why a role may trust an account root (arn:aws:iam::ACCOUNT:root: every principal of that account its IAM policies allow). Required when any trusted principal is an account root; null: account roots are refused."
  type        = string
  default     = null

  validation {
    condition     = var.account_root_trust_reason == null || length(trimspace(coalesce(var.account_root_trust_reason, " "))) > 0
    error_message = "DDB-SEC-01: account_root_trust_reason must say why an account root is trusted (non-empty), or be null."
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
    error_message = "DDB-SEC-01: max_session_duration must be between 3600 and 43200 seconds (1 to 12 hours, IAM's limits for a role session)."
  }
}

variable "tags" {
  description = "Tags on every policy and role."
  type        = map(string)
  default     = {}
}

variable "audit_log_group" {
  description = "The central copy of the dynops audit trail (`dynops --audit-log-group NAME`): a CloudWatch Logs group this module creates, encrypted with kms_key_arn (a customer managed key whose policy lets logs.REGION.amazonaws.com use it), kept retention_in_days, with an optional data protection policy (JSON). The operator and break-glass roles may only append to it (logs:CreateLogStream, logs:PutLogEvents on this group): no delete, no retention change. name defaults to /dynops/ENV[-PRODUCT]-audit. null: no group."
  type = object({
    name                   = optional(string)
    kms_key_arn            = string
    retention_in_days      = optional(number, 400)
    data_protection_policy = optional(string)
  })
  default = null

  validation {
    condition     = var.audit_log_group == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/", try(var.audit_log_group.kms_key_arn, "")))
    error_message = "DDB-SEC-04: audit_log_group.kms_key_arn must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID), not an alias: the audit copy is encrypted with a key of the account's."
  }
  validation {
    condition     = var.audit_log_group == null || contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], try(var.audit_log_group.retention_in_days, 0))
    error_message = "audit_log_group.retention_in_days must be a value CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653); never-expire (0) is refused: the trail needs an end the account decides."
  }
}
