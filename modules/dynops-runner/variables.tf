################################################################################
# Scope (DDB-SEC-03)
################################################################################

variable "env" {
  description = "Environment; the task's role reaches this env's resources only (the dynops-operator policy of modules/dynamodb-access, scoped to `{env}-*`)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9]*$", var.env))
    error_message = "DDB-SEC-03: env must be lower case letters and digits (e.g. \"prod\"); it is the table name prefix the runner's role is scoped to."
  }
}

variable "product" {
  description = "Product; resource names are `{env}-{product}-dynops-runner` (DDB-NAME-01)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]+(-[a-z0-9]+)*$", var.product))
    error_message = "DDB-NAME-01: product must be lower case words joined by '-' (e.g. \"hoge\")."
  }
}

variable "account_id" {
  description = "AWS account ID of the tables and the runner, for the ARNs (an input, so that plans need no AWS call)."
  type        = string

  validation {
    condition     = can(regex("^[0-9]{12}$", var.account_id))
    error_message = "DDB-SEC-03: account_id must be the 12-digit AWS account ID (e.g. \"123456789012\")."
  }
}

variable "region" {
  description = "Region of the runner and the tables; null means the provider's region."
  type        = string
  default     = null
}

variable "product_scope" {
  description = "Scope the operator policy to `{env}-{product}-*` instead of `{env}-*` (as modules/dynamodb-access's product_scope)."
  type        = bool
  default     = false
}

variable "health_check_ids" {
  description = "Route 53 health check IDs the runner's operator policy may read and invert (`dynops dr`), as modules/dynamodb-access's."
  type        = list(string)
  default     = []
}

################################################################################
# The task
################################################################################

variable "image" {
  description = "The dynops container image, pinned by tag or digest (e.g. `123456789012.dkr.ecr.eu-west-1.amazonaws.com/dynops:v1.4.0`); its entrypoint is replaced by `dynops`."
  type        = string

  validation {
    condition     = can(regex("^[^:@\\s]+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[0-9a-f]{64})$", var.image)) && !endswith(var.image, ":latest")
    error_message = "DDB-SEC-01: image must be pinned by a tag other than latest or by @sha256: digest (e.g. \"123456789012.dkr.ecr.eu-west-1.amazonaws.com/dynops:v1.4.0\"): a run must run the dynops that was reviewed."
  }
}

variable "image_repository_arn" {
  description = "ECR repository ARN of `image`, which the execution role may pull from; null: a public image (no ECR rights)."
  type        = string
  default     = null

  validation {
    condition     = var.image_repository_arn == null || can(regex("^arn:aws[a-z-]*:ecr:[a-z0-9-]+:[0-9]{12}:repository/.+$", var.image_repository_arn))
    error_message = "DDB-SEC-01: image_repository_arn must be an ECR repository ARN (arn:aws:ecr:REGION:ACCOUNT:repository/NAME), not a wildcard."
  }
}

variable "cpu" {
  description = "Fargate task CPU units (256 = 0.25 vCPU): dynops runs one command at a time."
  type        = number
  default     = 512

  validation {
    condition     = contains([256, 512, 1024, 2048, 4096], var.cpu)
    error_message = "cpu must be a Fargate CPU value: 256, 512, 1024, 2048 or 4096."
  }
}

variable "memory" {
  description = "Fargate task memory in MiB (must suit cpu, see the Fargate task size table)."
  type        = number
  default     = 1024

  validation {
    condition     = var.memory >= 512 && var.memory <= 30720
    error_message = "memory must be 512 to 30720 MiB (a Fargate task size)."
  }
}

variable "cpu_architecture" {
  description = "The image's CPU architecture: X86_64 or ARM64."
  type        = string
  default     = "X86_64"

  validation {
    condition     = contains(["X86_64", "ARM64"], var.cpu_architecture)
    error_message = "cpu_architecture must be X86_64 or ARM64."
  }
}

################################################################################
# Network
################################################################################

variable "subnet_ids" {
  description = "Subnets of the task (private ones, with a NAT gateway or VPC endpoints for DynamoDB, S3, STS, ECR and CloudWatch Logs)."
  type        = list(string)

  validation {
    condition     = length(var.subnet_ids) > 0 && alltrue([for s in var.subnet_ids : can(regex("^subnet-[0-9a-f]+$", s))])
    error_message = "subnet_ids must hold at least one subnet ID (e.g. \"subnet-0123456789abcdef0\")."
  }
}

variable "security_group_ids" {
  description = "Security groups of the task (egress to HTTPS is all dynops needs; no ingress)."
  type        = list(string)

  validation {
    condition     = length(var.security_group_ids) > 0 && alltrue([for s in var.security_group_ids : can(regex("^sg-[0-9a-f]+$", s))])
    error_message = "security_group_ids must hold at least one security group ID (e.g. \"sg-0123456789abcdef0\")."
  }
}

variable "assign_public_ip" {
  description = "Give the task a public IP (a public subnet without NAT). Off by default: the task needs egress, not a public address."
  type        = bool
  default     = false
}

################################################################################
# State and logs
################################################################################

variable "state_bucket" {
  description = "The team's runbook state (`dynops runbook run --state-bucket BUCKET/PREFIX`): the task reads and writes objects under PREFIX only."
  type = object({
    name   = string
    prefix = optional(string, "dynops/runbooks")
  })

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.state_bucket.name)) && can(regex("^[A-Za-z0-9!_.*'()/-]+$", var.state_bucket.prefix)) && !strcontains(var.state_bucket.prefix, "*")
    error_message = "DDB-SEC-03: state_bucket.name must be an S3 bucket name and state_bucket.prefix a key prefix without wildcards: the task's role reaches that prefix only (e.g. { name = \"acme-oncall\", prefix = \"dynops/runbooks\" })."
  }
}

variable "log_retention_in_days" {
  description = "How long the task's log group keeps the runs' output and audit copy (a CloudWatch Logs retention value)."
  type        = number
  default     = 400

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_in_days)
    error_message = "log_retention_in_days must be a CloudWatch Logs retention value (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288 or 3653)."
  }
}

variable "kms_key_arn" {
  description = "KMS key ARN encrypting the log group (its key policy must let logs.REGION.amazonaws.com use it); null: CloudWatch Logs' own encryption."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/", var.kms_key_arn))
    error_message = "DDB-SEC-04: kms_key_arn must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID), not an alias."
  }
}

variable "tags" {
  description = "Tags of every resource."
  type        = map(string)
  default     = {}
}

variable "permissions_boundary_arn" {
  description = "IAM permissions boundary attached to the module's roles, or null."
  type        = string
  default     = null

  validation {
    condition     = var.permissions_boundary_arn == null || can(regex("^arn:aws[a-z-]*:iam::([0-9]{12}|aws):policy/.+$", coalesce(var.permissions_boundary_arn, "x")))
    error_message = "DDB-SEC-01: permissions_boundary_arn must be an IAM policy ARN (arn:aws:iam::ACCOUNT:policy/NAME), or null."
  }
}
