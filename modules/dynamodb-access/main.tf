# IAM for a product's DynamoDB tables in one environment: one policy per role
# (and optionally the role), every DynamoDB ARN under table/{env}-* (DDB-SEC-03).
#
#   application      the owning application: items and indexes of its tables (DDB-SEC-01)
#   tenant           item-level isolation on dynamodb:LeadingKeys (DDB-SEC-02)
#   investigator     production reads: GetItem, Query (DDB-SEC-01)
#   data-patch       investigator + PutItem, UpdateItem (DDB-SEC-01)
#   dynops-operator  exactly what each dynops command calls (operator-actions.json,
#                    generated from internal/permissions), except the break-glass actions
#   dynops-break-glass  the operator's set plus the actions that can switch a table's
#                    protection off (resource policy, deletion protection, PITR), MFA only
#
# Every policy ends with an explicit Deny of everything outside the role's
# documented set (NotAction), which no resource policy can override.

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  partition = data.aws_partition.current.partition
  region    = coalesce(var.region, data.aws_region.current.name)
  arn       = "arn:${local.partition}:dynamodb:${local.region}:${var.account_id}"

  # DDB-SEC-03: what names "this env's" resources: {env}- or, with
  # product_scope, {env}-{product}-.
  scope = var.product_scope ? "${var.env}-${var.product}-" : "${var.env}-"

  # The one resource pattern for "any table of this env", which covers its
  # indexes, streams, backups and exports too.
  env_tables = "${local.arn}:table/${local.scope}*"
  # The same in every region (the caps below and the operator, which fails over).
  env_tables_any_region = "arn:${local.partition}:dynamodb:*:${var.account_id}:table/${local.scope}*"

  item_read  = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem"]
  item_write = ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"]

  # Every statement has every key (one object type); null keys are left out of the JSON.
  statement = { Sid = null, Effect = "Allow", Action = null, NotAction = null, Resource = null, Condition = null }

  # DDB-SEC-01: no role can grant itself more than its documented set. A
  # resource policy it could write (or anyone could) may Allow more, but an
  # explicit Deny in the role's own policy wins over any Allow. The data roles'
  # caps cover this env's DynamoDB resources only (their policies may be
  # attached to application roles that use other services); the operator and
  # break-glass roles are dynops' own, capped everywhere.
  cap = { for role, c in {
    application          = { actions = local.application_actions, resources = [local.env_tables_any_region] }
    tenant               = { actions = concat(local.item_read, local.item_write), resources = [local.env_tables_any_region] }
    investigator         = { actions = local.investigator_actions, resources = [local.env_tables_any_region] }
    "data-patch"         = { actions = local.data_patch_actions, resources = [local.env_tables_any_region] }
    "dynops-operator"    = { actions = local.operator_actions, resources = ["*"] }
    "dynops-break-glass" = { actions = concat(local.operator_actions, local.break_glass_actions), resources = ["*"] }
    } : role => merge(local.statement, {
      Sid       = "DenyOutsideDocumentedSet"
      Effect    = "Deny"
      NotAction = sort(distinct(c.actions))
      Resource  = c.resources
  }) }

  application_actions = concat(local.item_read, local.item_write, ["dynamodb:DescribeTable"])
  application = length(var.application_tables) == 0 ? null : {
    Version = "2012-10-17"
    Statement = [
      merge(local.statement, {
        Sid      = "ApplicationItems"
        Action   = local.application_actions
        Resource = flatten([for t in var.application_tables : ["${local.arn}:table/${t}", "${local.arn}:table/${t}/index/*"]])
      }),
      local.cap.application,
    ]
  }

  # DDB-SEC-02. ForAllValues on a key the request lacks is true, so each
  # statement also requires dynamodb:LeadingKeys and the tenant tag to exist.
  # StringEquals on the exact composed key (prefix + tenant id): t1 never
  # matches t10. Composite index keys need StringLike on prefix + id +
  # delimiter + *, which is safe because the delimiter is a character a tag
  # value cannot hold; the policy itself (not only the trust policy of the
  # role this module may create) refuses a tag with a wildcard, the
  # delimiter, or nothing in it.
  tenant_value = "$${aws:PrincipalTag/${var.tenant_tag_key}}"
  tenant_tag   = "aws:PrincipalTag/${var.tenant_tag_key}"
  tenant_present = {
    "dynamodb:LeadingKeys" = "false"
    (local.tenant_tag)     = "false"
  }
  tenant_sid = { for t in keys(var.tenant_tables) : t => join("", [for w in split("-", t) : title(w)]) }
  # Values the tenant tag must never have: wildcards and variables (which a
  # tag cannot hold either) and every index-key delimiter in use.
  tenant_forbidden_values = distinct(concat(["*$${*}*", "*$${?}*", "*$${$}*"], [for cfg in values(var.tenant_tables) : "*${cfg.index_key_delimiter}*" if cfg.index_key_delimiter != null]))
  tenant_resources        = flatten([for t in keys(var.tenant_tables) : ["${local.arn}:table/${t}", "${local.arn}:table/${t}/index/*"]])
  # Indexes marked cross-tenant (their partition key is not the tenant key):
  # LeadingKeys does not bound them, so the tenant role never reaches them.
  cross_tenant_index_arns = flatten([for t, cfg in var.tenant_tables : [for i in keys(cfg.cross_tenant_indexes) : "${local.arn}:table/${t}/index/${i}"]])

  tenant = length(var.tenant_tables) == 0 ? null : {
    Version = "2012-10-17"
    Statement = concat(
      [for t, cfg in var.tenant_tables : merge(local.statement, {
        Sid      = "TenantItems${local.tenant_sid[t]}"
        Action   = concat(local.item_read, local.item_write)
        Resource = ["${local.arn}:table/${t}", "${local.arn}:table/${t}/index/*"]
        Condition = {
          "ForAllValues:StringEquals" = { "dynamodb:LeadingKeys" = ["${cfg.key_prefix}${local.tenant_value}"] }
          Null                        = local.tenant_present
        }
      })],
      [for t, cfg in var.tenant_tables : merge(local.statement, {
        Sid      = "TenantIndexQuery${local.tenant_sid[t]}"
        Action   = ["dynamodb:Query"]
        Resource = ["${local.arn}:table/${t}/index/*"]
        Condition = {
          "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["${cfg.key_prefix}${local.tenant_value}${cfg.index_key_delimiter}*"] }
          Null                      = local.tenant_present
        }
      }) if cfg.index_key_delimiter != null],
      [
        merge(local.statement, {
          Sid       = "DenyTenantTagWithWildcardOrDelimiter"
          Effect    = "Deny"
          Action    = concat(local.item_read, local.item_write)
          Resource  = local.tenant_resources
          Condition = { StringLike = { (local.tenant_tag) = local.tenant_forbidden_values } }
        }),
        merge(local.statement, {
          Sid       = "DenyEmptyOrMissingTenantTag"
          Effect    = "Deny"
          Action    = concat(local.item_read, local.item_write)
          Resource  = local.tenant_resources
          Condition = { StringNotLike = { (local.tenant_tag) = "?*" } }
        }),
        merge(local.statement, {
          Sid      = "DenyScanAndPartiQL"
          Effect   = "Deny"
          Action   = ["dynamodb:Scan", "dynamodb:PartiQLSelect", "dynamodb:PartiQLInsert", "dynamodb:PartiQLUpdate", "dynamodb:PartiQLDelete"]
          Resource = [local.env_tables]
        }),
      ],
      length(local.cross_tenant_index_arns) == 0 ? [] : [merge(local.statement, {
        Sid      = "DenyCrossTenantIndexes"
        Effect   = "Deny"
        Action   = ["dynamodb:*"]
        Resource = local.cross_tenant_index_arns
      })],
      [local.cap.tenant],
    )
  }

  investigator_actions = ["dynamodb:GetItem", "dynamodb:Query"]
  data_patch_actions   = concat(local.investigator_actions, ["dynamodb:PutItem", "dynamodb:UpdateItem"])
  investigator = {
    Version   = "2012-10-17"
    Statement = [merge(local.statement, { Sid = "InvestigateItems", Action = local.investigator_actions, Resource = [local.env_tables] }), local.cap.investigator]
  }
  data_patch = {
    Version   = "2012-10-17"
    Statement = [merge(local.statement, { Sid = "PatchItems", Action = local.data_patch_actions, Resource = [local.env_tables] }), local.cap["data-patch"]]
  }

  # Resources per scope of operator-actions.json: "*" for actions IAM cannot
  # scope, otherwise this env's resources of the service (DDB-SEC-03).
  operator_scopes = {
    "*" = ["*"]
    # The operator works in every region of the env (DR failover): any region, env-scoped tables.
    dynamodb = [local.env_tables_any_region]
    # The DR pointer, the migration routes, and the env's runbook notification webhook (a SecureString).
    ssm = [
      "arn:${local.partition}:ssm:*:${var.account_id}:parameter/dynops/dr/${local.scope}*",
      "arn:${local.partition}:ssm:*:${var.account_id}:parameter/dynops/migrate/${local.scope}*",
      "arn:${local.partition}:ssm:*:${var.account_id}:parameter/dynops/oncall/${local.scope}*",
    ]
    # Health check ARNs hold only an ID: the env's are the ones modules/dr created for it.
    route53 = [for id in var.health_check_ids : "arn:${local.partition}:route53:::healthcheck/${id}"]
    # The env's experiment templates only (any region: modules/dr makes the pause template in the DR region),
    # and the experiments they run (StartExperiment names both; GetExperiment and StopExperiment the experiment).
    fis = length(var.fis_experiment_template_ids) == 0 ? [] : concat(
      [for id in var.fis_experiment_template_ids : "arn:${local.partition}:fis:*:${var.account_id}:experiment-template/${id}"],
      ["arn:${local.partition}:fis:*:${var.account_id}:experiment/*"],
    )
    logs       = ["arn:${local.partition}:logs:${local.region}:${var.account_id}:log-group:/aws-dynamodb/imports:*"]
    s3         = ["arn:${local.partition}:s3:::${local.scope}*", "arn:${local.partition}:s3:::${local.scope}*/*"]
    sqs        = ["arn:${local.partition}:sqs:${local.region}:${var.account_id}:${local.scope}*"]
    lambda     = ["arn:${local.partition}:lambda:${local.region}:${var.account_id}:function:${local.scope}*", "arn:${local.partition}:lambda:${local.region}:${var.account_id}:event-source-mapping:*"]
    cloudwatch = ["arn:${local.partition}:cloudwatch:${local.region}:${var.account_id}:alarm:${local.scope}*"]
    # check --to-security-hub: this account's hub (GetFindings) and its custom-integration
    # product (BatchImportFindings), in the operator's region. No BatchUpdateFindings: on the
    # hub it would reach every product's findings (suppress GuardDuty's, lower a control's).
    securityhub = ["arn:${local.partition}:securityhub:${local.region}:${var.account_id}:hub/default", "arn:${local.partition}:securityhub:${local.region}:${var.account_id}:product/${var.account_id}/default"]
    backup      = ["arn:${local.partition}:backup:${local.region}:${var.account_id}:backup-vault:${var.env}-*", "arn:${local.partition}:backup:${local.region}:${var.account_id}:recovery-point:*"]
    # runbook run notifications (docs/oncall-team.md): the env's topics, its webhook secret, and the
    # timelines of incidents opened by its response plans (incident-record/<response plan>/<id>).
    sns            = ["arn:${local.partition}:sns:${local.region}:${var.account_id}:${local.scope}*"]
    secretsmanager = ["arn:${local.partition}:secretsmanager:${local.region}:${var.account_id}:secret:dynops/oncall/${local.scope}*"]
    ssm-incidents  = ["arn:${local.partition}:ssm-incidents::${var.account_id}:incident-record/${local.scope}*"]
  }
  # S3 ARNs carry no account: a bucket named like the env's could be another
  # account's; the condition ties them to this account.
  operator_conditions = {
    s3 = { StringEquals = { "aws:ResourceAccount" = var.account_id } }
  }
  # PutMetricData has no resource: the namespace condition keeps the operator
  # from writing into other namespaces (e.g. masking the export alarms' metrics).
  metrics_namespace = "dynops/Export"

  # The central audit copy: the operator appends to it and nothing else
  # (internal/audit cwlogs.go calls CreateLogStream and PutLogEvents).
  audit_log_group = var.audit_log_group == null ? null : coalesce(var.audit_log_group.name, "/dynops/${local.scope}audit")
  audit_append = local.audit_log_group == null ? [] : [merge(local.statement, {
    Sid      = "DynopsAuditCopy"
    Action   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    Resource = ["arn:${local.partition}:logs:${local.region}:${var.account_id}:log-group:${local.audit_log_group}:*"]
  })]

  operator_doc        = jsondecode(file("${path.module}/operator-actions.json"))
  operator_actions    = flatten([for s in local.operator_doc.statements : s.actions])
  break_glass_actions = flatten([for s in local.operator_doc.break_glass : s.actions])
  operator_allow = concat(
    [for s in local.operator_doc.statements : merge(local.statement, {
      Sid       = "Dynops${s.scope == "*" ? "Unscoped" : replace(title(replace(s.scope, "-", " ")), " ", "")}"
      Action    = [for a in s.actions : a if a != "cloudwatch:PutMetricData"]
      Resource  = local.operator_scopes[s.scope]
      Condition = lookup(local.operator_conditions, s.scope, null)
    }) if length(local.operator_scopes[s.scope]) > 0],
    contains(local.operator_actions, "cloudwatch:PutMetricData") ? [merge(local.statement, {
      Sid       = "DynopsMetrics"
      Action    = ["cloudwatch:PutMetricData"]
      Resource  = ["*"]
      Condition = { StringEquals = { "cloudwatch:namespace" = local.metrics_namespace } }
    })] : [],
    local.audit_append,
  )
  # The env tags are the protection dynops reads (internal/protect: env or
  # environment, any case): the operator may set them on a table that has
  # none (a table it just created by restore or import) but never change or
  # remove them; that is the break-glass role's, with MFA.
  env_tag_keys = ["env", "environment"]
  operator_env_tags = concat(
    [merge(local.statement, {
      Sid       = "DenyRemovingEnvTags"
      Effect    = "Deny"
      Action    = ["dynamodb:UntagResource"]
      Resource  = ["*"]
      Condition = { "ForAnyValue:StringEqualsIgnoreCase" = { "aws:TagKeys" = local.env_tag_keys } }
    })],
    [for k in local.env_tag_keys : merge(local.statement, {
      Sid       = "DenyChangingEnvTag${title(k)}"
      Effect    = "Deny"
      Action    = ["dynamodb:TagResource"]
      Resource  = ["*"]
      Condition = { "ForAnyValue:StringEqualsIgnoreCase" = { "aws:TagKeys" = local.env_tag_keys }, Null = { "aws:ResourceTag/${k}" = "false" } }
    })],
  )
  operator = {
    Version   = "2012-10-17"
    Statement = concat(local.operator_allow, local.operator_env_tags, [local.cap["dynops-operator"]])
  }

  # The break-glass role: the operator's set plus the actions that can switch
  # a table's protection off (resource policy, deletion protection, PITR) or
  # move data without the fence (TTL, the DR and migration pointers), on this
  # env's tables and pointers and only in a session with MFA.
  break_glass = {
    Version = "2012-10-17"
    Statement = concat(local.operator_allow, [
      for s in local.operator_doc.break_glass : merge(local.statement, {
        Sid      = s.scope == "dynamodb" ? "BreakGlassProtection" : "BreakGlass${replace(title(replace(s.scope, "-", " ")), " ", "")}"
        Action   = s.actions
        Resource = s.scope == "dynamodb" ? [local.env_tables_any_region] : local.operator_scopes[s.scope]
      })
      ], [
      merge(local.statement, {
        Sid       = "DenyProtectionChangesWithoutMFA"
        Effect    = "Deny"
        Action    = local.break_glass_actions
        Resource  = ["*"]
        Condition = { BoolIfExists = { "aws:MultiFactorAuthPresent" = "false" } }
      }),
      local.cap["dynops-break-glass"],
    ])
  }

  # Role key => policy document; null documents (no tables given) are left out.
  documents = { for k, d in {
    application          = local.application
    tenant               = local.tenant
    investigator         = local.investigator
    "data-patch"         = local.data_patch
    "dynops-operator"    = local.operator
    "dynops-break-glass" = local.break_glass
  } : k => d if d != null }

  # The JSON leaves out the keys a statement does not use (null).
  policies = { for k, d in local.documents : k => jsonencode({
    Version   = d.Version
    Statement = [for s in d.Statement : { for sk, sv in s : sk => sv if sv != null }]
  }) }

  name_prefix = "${var.env}-${var.product}-dynamodb"
  tags        = merge(var.tags, { env = var.env, product = var.product, "managed-by" = "terraform" })
}

resource "aws_iam_policy" "this" {
  for_each = var.create_policies ? local.policies : {}

  name        = "${local.name_prefix}-${each.key}"
  description = "dynops ${each.key}: DynamoDB access to ${var.env}-* tables (DDB-SEC-01/02/03)"
  policy      = each.value

  tags = local.tags
}

################################################################################
# Roles (optional)
################################################################################

locals {
  # Each role trusts its own list: role_trusted_principal_arns[role], else
  # trusted_principal_arns; the tenant role only its own entry (DDB-SEC-01).
  principals = { for k in keys(local.policies) : k => distinct(
    contains(keys(var.role_trusted_principal_arns), k) ? var.role_trusted_principal_arns[k] : (k == "tenant" ? [] : var.trusted_principal_arns)
  ) }
  # Principals the tenant role trusts that another role trusts too.
  tenant_overlap = { for k, ps in local.principals : k => sort(setintersection(ps, lookup(local.principals, "tenant", []))) if k != "tenant" }
  account_roots  = sort(distinct([for p in flatten(values(local.principals)) : p if can(regex(":root$", p))]))

  # The tenant role: AssumeRole must carry the tenant tag (sts:TagSession),
  # without wildcards or a composite-key delimiter in its value (DDB-SEC-02).
  assume = { for k in keys(local.policies) : k => jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Sid = "Assume", Effect = "Allow", Principal = { AWS = local.principals[k] }, Action = ["sts:AssumeRole"] }]
  }) }
  assume_with_tenant_tag = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "AssumeWithTenantTag"
      Effect    = "Allow"
      Principal = { AWS = lookup(local.principals, "tenant", []) }
      Action    = ["sts:AssumeRole", "sts:TagSession"]
      Condition = {
        Null          = { "aws:RequestTag/${var.tenant_tag_key}" = "false" }
        StringLike    = { "aws:RequestTag/${var.tenant_tag_key}" = "?*" }
        StringNotLike = { "aws:RequestTag/${var.tenant_tag_key}" = local.tenant_forbidden_values }
      }
    }]
  })
  # The break-glass role: only a session with MFA may assume it.
  assume_with_mfa = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "AssumeWithMFA"
      Effect    = "Allow"
      Principal = { AWS = lookup(local.principals, "dynops-break-glass", []) }
      Action    = ["sts:AssumeRole"]
      Condition = { Bool = { "aws:MultiFactorAuthPresent" = "true" } }
    }]
  })
  trust = { for k in keys(local.policies) : k => (
    k == "tenant" ? local.assume_with_tenant_tag : k == "dynops-break-glass" ? local.assume_with_mfa : local.assume[k]
  ) }
}

resource "aws_iam_role" "this" {
  for_each = var.create_roles ? local.policies : {}

  name                 = "${local.name_prefix}-${each.key}"
  description          = "dynops ${each.key} role for ${var.env}-* DynamoDB tables"
  assume_role_policy   = local.trust[each.key]
  permissions_boundary = var.permissions_boundary_arn
  max_session_duration = var.max_session_duration

  tags = local.tags

  lifecycle {
    precondition {
      condition     = length(local.principals[each.key]) > 0
      error_message = "DDB-SEC-01: the ${each.key} role trusts no principal: set role_trusted_principal_arns[\"${each.key}\"]${each.key == "tenant" ? " (the tenant role never trusts trusted_principal_arns)" : " or trusted_principal_arns"}."
    }
    precondition {
      condition     = length(lookup(local.tenant_overlap, each.key, [])) == 0
      error_message = "DDB-SEC-01: ${join(", ", lookup(local.tenant_overlap, each.key, []))} is trusted by both the tenant role and the ${each.key} role: a tenant caller could assume ${each.key} and leave the tenant key condition behind. Give the tenant role its own principals (role_trusted_principal_arns[\"tenant\"])."
    }
    precondition {
      condition     = length(local.account_roots) == 0 || var.account_root_trust_reason != null
      error_message = "DDB-SEC-01: ${join(", ", local.account_roots)} is an account root (every principal of the account its policies allow may assume the role): name roles instead, or set account_root_trust_reason to say why."
    }
  }
}

resource "aws_iam_role_policy_attachment" "this" {
  for_each = var.create_roles ? local.policies : {}

  role       = aws_iam_role.this[each.key].name
  policy_arn = aws_iam_policy.this[each.key].arn
}

################################################################################
# The central audit copy (optional)
################################################################################

resource "aws_cloudwatch_log_group" "audit" {
  count = var.audit_log_group == null ? 0 : 1

  name              = local.audit_log_group
  retention_in_days = var.audit_log_group.retention_in_days
  kms_key_id        = var.audit_log_group.kms_key_arn

  tags = merge(local.tags, { Name = local.audit_log_group })
}

resource "aws_cloudwatch_log_data_protection_policy" "audit" {
  count = try(var.audit_log_group.data_protection_policy, null) == null ? 0 : 1

  log_group_name  = aws_cloudwatch_log_group.audit[0].name
  policy_document = var.audit_log_group.data_protection_policy
}
