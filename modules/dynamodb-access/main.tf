# IAM for a product's DynamoDB tables in one environment: one policy per role
# (and optionally the role), every DynamoDB ARN under table/{env}-* (DDB-SEC-03).
#
#   application      the owning application: items and indexes of its tables (DDB-SEC-01)
#   tenant           item-level isolation on dynamodb:LeadingKeys (DDB-SEC-02)
#   investigator     production reads: GetItem, Query (DDB-SEC-01)
#   data-patch       investigator + PutItem, UpdateItem (DDB-SEC-01)
#   dynops-operator  exactly what each dynops command calls (operator-actions.json,
#                    generated from internal/permissions)

data "aws_partition" "current" {}

data "aws_region" "current" {}

locals {
  partition = data.aws_partition.current.partition
  region    = coalesce(var.region, data.aws_region.current.name)
  arn       = "arn:${local.partition}:dynamodb:${local.region}:${var.account_id}"

  # DDB-SEC-03: the one resource pattern for "any table of this env", which
  # covers its indexes, streams, backups and exports too.
  env_tables = "${local.arn}:table/${var.env}-*"

  item_read  = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:ConditionCheckItem"]
  item_write = ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"]

  application = length(var.application_tables) == 0 ? null : {
    Version = "2012-10-17"
    Statement = [{
      Sid       = "ApplicationItems"
      Effect    = "Allow"
      Action    = concat(local.item_read, local.item_write, ["dynamodb:DescribeTable"])
      Resource  = flatten([for t in var.application_tables : ["${local.arn}:table/${t}", "${local.arn}:table/${t}/index/*"]])
      Condition = null
    }]
  }

  # DDB-SEC-02. ForAllValues on a key the request lacks is true, so each
  # statement also requires dynamodb:LeadingKeys and the tenant tag to exist.
  # StringEquals on the exact composed key (prefix + tenant id): t1 never
  # matches t10. Composite index keys need StringLike on prefix + id +
  # delimiter + *, which the trust policy makes safe by refusing tenant ids
  # that contain the delimiter or a wildcard.
  tenant_value = "$${aws:PrincipalTag/${var.tenant_tag_key}}"
  tenant_present = {
    "dynamodb:LeadingKeys"                   = "false"
    "aws:PrincipalTag/${var.tenant_tag_key}" = "false"
  }
  tenant_sid = { for t in keys(var.tenant_tables) : t => join("", [for w in split("-", t) : title(w)]) }

  tenant = length(var.tenant_tables) == 0 ? null : {
    Version = "2012-10-17"
    Statement = concat(
      [for t, cfg in var.tenant_tables : {
        Sid      = "TenantItems${local.tenant_sid[t]}"
        Effect   = "Allow"
        Action   = concat(local.item_read, local.item_write)
        Resource = ["${local.arn}:table/${t}", "${local.arn}:table/${t}/index/*"]
        Condition = {
          "ForAllValues:StringEquals" = { "dynamodb:LeadingKeys" = ["${cfg.key_prefix}${local.tenant_value}"] }
          Null                        = local.tenant_present
        }
      }],
      [for t, cfg in var.tenant_tables : {
        Sid      = "TenantIndexQuery${local.tenant_sid[t]}"
        Effect   = "Allow"
        Action   = ["dynamodb:Query"]
        Resource = ["${local.arn}:table/${t}/index/*"]
        Condition = {
          "ForAllValues:StringLike" = { "dynamodb:LeadingKeys" = ["${cfg.key_prefix}${local.tenant_value}${cfg.index_key_delimiter}*"] }
          Null                      = local.tenant_present
        }
      } if cfg.index_key_delimiter != null],
      [{
        Sid       = "DenyScanAndPartiQL"
        Effect    = "Deny"
        Action    = ["dynamodb:Scan", "dynamodb:PartiQLSelect", "dynamodb:PartiQLInsert", "dynamodb:PartiQLUpdate", "dynamodb:PartiQLDelete"]
        Resource  = [local.env_tables]
        Condition = null
      }],
    )
  }

  investigator_actions = ["dynamodb:GetItem", "dynamodb:Query"]
  investigator = {
    Version   = "2012-10-17"
    Statement = [{ Sid = "InvestigateItems", Effect = "Allow", Action = local.investigator_actions, Resource = [local.env_tables], Condition = null }]
  }
  data_patch = {
    Version   = "2012-10-17"
    Statement = [{ Sid = "PatchItems", Effect = "Allow", Action = concat(local.investigator_actions, ["dynamodb:PutItem", "dynamodb:UpdateItem"]), Resource = [local.env_tables], Condition = null }]
  }

  # Resources per scope of operator-actions.json: "*" for actions IAM cannot
  # scope, otherwise this env's resources of the service (DDB-SEC-03).
  operator_scopes = {
    "*" = ["*"]
    # The operator works in every region of the env (DR failover): any region, env-scoped tables.
    dynamodb   = ["arn:${local.partition}:dynamodb:*:${var.account_id}:table/${var.env}-*"]
    ssm        = ["arn:${local.partition}:ssm:*:${var.account_id}:parameter/dynops/dr/${var.env}-*", "arn:${local.partition}:ssm:*:${var.account_id}:parameter/dynops/migrate/${var.env}-*"]
    route53    = ["arn:${local.partition}:route53:::healthcheck/*"]
    logs       = ["arn:${local.partition}:logs:${local.region}:${var.account_id}:log-group:/aws-dynamodb/imports:*"]
    s3         = ["arn:${local.partition}:s3:::${var.env}-*", "arn:${local.partition}:s3:::${var.env}-*/*"]
    sqs        = ["arn:${local.partition}:sqs:${local.region}:${var.account_id}:${var.env}-*"]
    lambda     = ["arn:${local.partition}:lambda:${local.region}:${var.account_id}:function:${var.env}-*", "arn:${local.partition}:lambda:${local.region}:${var.account_id}:event-source-mapping:*"]
    cloudwatch = ["arn:${local.partition}:cloudwatch:${local.region}:${var.account_id}:alarm:${var.env}-*"]
    backup     = ["arn:${local.partition}:backup:${local.region}:${var.account_id}:backup-vault:${var.env}-*", "arn:${local.partition}:backup:${local.region}:${var.account_id}:recovery-point:*"]
  }
  operator = {
    Version = "2012-10-17"
    Statement = [for s in jsondecode(file("${path.module}/operator-actions.json")).statements : {
      Sid       = "Dynops${s.scope == "*" ? "Unscoped" : title(s.scope)}"
      Effect    = "Allow"
      Action    = s.actions
      Resource  = local.operator_scopes[s.scope]
      Condition = null
    }]
  }

  # Role key => policy document; null documents (no tables given) are left out.
  documents = { for k, d in {
    application       = local.application
    tenant            = local.tenant
    investigator      = local.investigator
    "data-patch"      = local.data_patch
    "dynops-operator" = local.operator
  } : k => d if d != null }

  # Statements carry Condition = null where there is none (one object type for
  # every statement); the JSON leaves those keys out.
  policies = { for k, d in local.documents : k => jsonencode({
    Version   = d.Version
    Statement = [for s in d.Statement : { for sk, sv in s : sk => sv if sv != null }]
  }) }

  name_prefix = "${var.env}-${var.product}-dynamodb"
  tags        = merge(var.tags, { env = var.env, product = var.product, "managed-by" = "terraform" })
}

resource "aws_iam_policy" "this" {
  for_each = local.policies

  name        = "${local.name_prefix}-${each.key}"
  description = "dynops ${each.key}: DynamoDB access to ${var.env}-* tables (DDB-SEC-01/02/03)"
  policy      = each.value

  tags = local.tags
}

################################################################################
# Roles (optional)
################################################################################

locals {
  trusted = { AWS = var.trusted_principal_arns }

  # The tenant role: AssumeRole must carry the tenant tag (sts:TagSession),
  # without wildcards or a composite-key delimiter in its value (DDB-SEC-02).
  tenant_forbidden_values = distinct(concat(["*$${*}*", "*$${?}*"], [for cfg in values(var.tenant_tables) : "*${cfg.index_key_delimiter}*" if cfg.index_key_delimiter != null]))
  assume = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Sid = "Assume", Effect = "Allow", Principal = local.trusted, Action = ["sts:AssumeRole"] }]
  })
  assume_with_tenant_tag = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid       = "AssumeWithTenantTag"
      Effect    = "Allow"
      Principal = local.trusted
      Action    = ["sts:AssumeRole", "sts:TagSession"]
      Condition = {
        Null          = { "aws:RequestTag/${var.tenant_tag_key}" = "false" }
        StringLike    = { "aws:RequestTag/${var.tenant_tag_key}" = "?*" }
        StringNotLike = { "aws:RequestTag/${var.tenant_tag_key}" = local.tenant_forbidden_values }
      }
    }]
  })
  trust = { for k in keys(local.policies) : k => k == "tenant" ? local.assume_with_tenant_tag : local.assume }
}

resource "aws_iam_role" "this" {
  for_each = var.create_roles ? local.policies : {}

  name                 = "${local.name_prefix}-${each.key}"
  description          = "dynops ${each.key} role for ${var.env}-* DynamoDB tables"
  assume_role_policy   = local.trust[each.key]
  permissions_boundary = var.permissions_boundary_arn
  max_session_duration = var.max_session_duration

  tags = local.tags
}

resource "aws_iam_role_policy_attachment" "this" {
  for_each = var.create_roles ? local.policies : {}

  role       = aws_iam_role.this[each.key].name
  policy_arn = aws_iam_policy.this[each.key].arn
}
