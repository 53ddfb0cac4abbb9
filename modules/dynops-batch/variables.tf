################################################################################
# Naming and network
################################################################################

variable "name" {
  description = "Name of the job queue and the prefix of the job definition, roles and log group."
  type        = string
  default     = "dynops-batch"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{2,40}[a-z0-9]$", var.name))
    error_message = "DDB-NAME-01: name must be 4-42 lower case letters, digits or '-', starting with a letter (e.g. \"prod-hoge-dynops-batch\")."
  }
}

variable "subnet_ids" {
  description = "Private subnets the Fargate tasks run in; they reach DynamoDB and S3 through gateway endpoints (modules/dynamodb-vpc-endpoint) or a NAT."
  type        = list(string)

  validation {
    condition     = length(var.subnet_ids) > 0 && alltrue([for s in var.subnet_ids : can(regex("^subnet-[0-9a-f]{8,17}$", s))])
    error_message = "DDB-SEC-05: subnet_ids must list at least one subnet ID (subnet-0123456789abcdef0)."
  }
}

variable "security_group_ids" {
  description = "Security groups of the Fargate tasks (egress to DynamoDB, S3 and, for the image, ECR)."
  type        = list(string)

  validation {
    condition     = length(var.security_group_ids) > 0 && alltrue([for s in var.security_group_ids : can(regex("^sg-[0-9a-f]{8,17}$", s))])
    error_message = "DDB-SEC-05: security_group_ids must list at least one security group ID (sg-0123456789abcdef0)."
  }
}

variable "assign_public_ip" {
  description = "Give each task a public IP (only for subnets with an internet gateway and no NAT); false keeps the tasks private."
  type        = bool
  default     = false
}

variable "max_vcpus" {
  description = "Most vCPUs the compute environment runs at once: shards running at once = max_vcpus / worker.vcpu. Bound it by the account's Fargate vCPU quota and by the run's capacity budget (more shards do not read or write faster than the budget)."
  type        = number
  default     = 64

  validation {
    condition     = var.max_vcpus >= 1 && var.max_vcpus == floor(var.max_vcpus) && var.max_vcpus <= 10000
    error_message = "DDB-CAP-04: max_vcpus must be a whole number of vCPUs from 1 to 10000."
  }
}

################################################################################
# The worker
################################################################################

variable "image" {
  description = "The dynops container image the shards run, by tag or digest (e.g. 123456789012.dkr.ecr.eu-west-1.amazonaws.com/dynops:v2.4.0). An ECR image's repository is the only one the execution role may pull from."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][^\\s@:]*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[0-9a-f]{64})$", var.image)) && !endswith(var.image, ":latest")
    error_message = "DDB-SEC-01: image must name a tag other than latest, or a digest (REPOSITORY:v2.4.0 or REPOSITORY@sha256:...): every shard of a run must run the same dynops."
  }
}

variable "worker" {
  description = "Size and limits of each shard's task: vcpu and memory_mib (a Fargate combination), ephemeral_storage_gib (the task's disk, where the diff spills its buckets: Fargate gives 20 free, up to 200), retry_attempts (Batch moves a failed shard back to RUNNABLE up to this many attempts in all; shards are idempotent) and timeout_seconds (an attempt running longer is stopped)."
  type = object({
    vcpu                  = optional(number, 1)
    memory_mib            = optional(number, 4096)
    ephemeral_storage_gib = optional(number, 20)
    retry_attempts        = optional(number, 3)
    timeout_seconds       = optional(number, 14400)
  })
  default = {}

  validation {
    condition     = contains([0.25, 0.5, 1, 2, 4, 8, 16], var.worker.vcpu)
    error_message = "DDB-CAP-04: worker.vcpu must be a Fargate vCPU value: 0.25, 0.5, 1, 2, 4, 8 or 16."
  }

  validation {
    condition = (
      var.worker.vcpu == 0.25 ? contains([512, 1024, 2048], var.worker.memory_mib) :
      var.worker.vcpu == 0.5 ? var.worker.memory_mib >= 1024 && var.worker.memory_mib <= 4096 && var.worker.memory_mib % 1024 == 0 :
      var.worker.vcpu == 1 ? var.worker.memory_mib >= 2048 && var.worker.memory_mib <= 8192 && var.worker.memory_mib % 1024 == 0 :
      var.worker.vcpu == 2 ? var.worker.memory_mib >= 4096 && var.worker.memory_mib <= 16384 && var.worker.memory_mib % 1024 == 0 :
      var.worker.vcpu == 4 ? var.worker.memory_mib >= 8192 && var.worker.memory_mib <= 30720 && var.worker.memory_mib % 1024 == 0 :
      var.worker.vcpu == 8 ? var.worker.memory_mib >= 16384 && var.worker.memory_mib <= 61440 && var.worker.memory_mib % 4096 == 0 :
      var.worker.memory_mib >= 32768 && var.worker.memory_mib <= 122880 && var.worker.memory_mib % 8192 == 0
    )
    error_message = "DDB-CAP-04: worker.memory_mib must be a Fargate memory for worker.vcpu: 0.25 vCPU 512/1024/2048; 0.5 vCPU 1024-4096, 1 vCPU 2048-8192, 2 vCPU 4096-16384, 4 vCPU 8192-30720 (steps of 1024); 8 vCPU 16384-61440 (steps of 4096); 16 vCPU 32768-122880 (steps of 8192)."
  }

  validation {
    condition     = var.worker.ephemeral_storage_gib >= 20 && var.worker.ephemeral_storage_gib <= 200 && var.worker.ephemeral_storage_gib == floor(var.worker.ephemeral_storage_gib)
    error_message = "DDB-CAP-04: worker.ephemeral_storage_gib must be a whole number from 20 to 200 (Fargate's task storage)."
  }

  validation {
    condition     = var.worker.retry_attempts >= 1 && var.worker.retry_attempts <= 10 && var.worker.retry_attempts == floor(var.worker.retry_attempts)
    error_message = "DDB-CAP-04: worker.retry_attempts must be 1 to 10 (AWS Batch's retry strategy)."
  }

  validation {
    condition     = var.worker.timeout_seconds >= 60 && var.worker.timeout_seconds == floor(var.worker.timeout_seconds)
    error_message = "DDB-CAP-04: worker.timeout_seconds must be a whole number of at least 60 (AWS Batch's shortest attempt timeout)."
  }

  validation {
    condition     = var.worker.vcpu <= var.max_vcpus
    error_message = "DDB-CAP-04: worker.vcpu must not exceed max_vcpus, or no shard can ever start."
  }
}

################################################################################
# Logs
################################################################################

variable "log_retention_days" {
  description = "Retention of the shards' CloudWatch Logs log group, in days."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_days)
    error_message = "DDB-MON-02: log_retention_days must be a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288 or 3653)."
  }
}

variable "log_kms_key_arn" {
  description = "KMS key encrypting the log group (its key policy must allow the CloudWatch Logs service); null for the service's own encryption."
  type        = string
  default     = null

  validation {
    condition     = var.log_kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[0-9a-f-]+$", coalesce(var.log_kms_key_arn, "x")))
    error_message = "DDB-SEC-04: log_kms_key_arn must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID), or null for the service's own encryption."
  }
}

################################################################################
# What the job role may touch (DDB-SEC-01): the run's tables and prefixes only
################################################################################

variable "source_table_arns" {
  description = "Tables the shards read: DescribeTable and Scan (live-table shards), DescribeExport of their exports. All in one account and region."
  type        = list(string)

  validation {
    condition     = length(var.source_table_arns) > 0 && alltrue([for a in var.source_table_arns : can(regex("^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[A-Za-z0-9_.-]{3,255}$", a))])
    error_message = "DDB-SEC-01: source_table_arns must list at least one table ARN (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME), not a wildcard or an index."
  }

  validation {
    condition     = length(distinct([for a in var.source_table_arns : join(":", slice(split(":", a), 0, 5))])) <= 1
    error_message = "DDB-SEC-01: source_table_arns must all be in one account and region (one dynops-batch per region)."
  }
}

variable "export_locations" {
  description = "Where the source tables' exports are (bucket and key prefix, e.g. from modules/dynamodb-export): the shards may list and read objects under these prefixes only."
  type = list(object({
    bucket = string
    prefix = string
  }))
  default = []

  validation {
    condition = alltrue([for l in var.export_locations :
    can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", l.bucket)) && can(regex("^[A-Za-z0-9][A-Za-z0-9_.=-]*(/[A-Za-z0-9_.=-]+)*$", l.prefix))])
    error_message = "DDB-SEC-01: export_locations must be { bucket = S3 bucket name, prefix = key prefix without leading or trailing '/' } (an empty prefix would open the whole bucket)."
  }
}

variable "run_location" {
  description = "Where runs exchange their shards' outputs (the driver's --run-prefix s3://BUCKET/PREFIX): the shards may list, read and write objects under this prefix only."
  type = object({
    bucket = string
    prefix = string
  })

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.run_location.bucket)) && can(regex("^[A-Za-z0-9][A-Za-z0-9_.=-]*(/[A-Za-z0-9_.=-]+)*$", var.run_location.prefix))
    error_message = "DDB-SEC-01: run_location must be { bucket = S3 bucket name, prefix = key prefix without leading or trailing '/' } (an empty prefix would open the whole bucket to writes)."
  }
}

variable "write_target_table_arns" {
  description = "Tables the shards may repair with conditional writes (PutItem, UpdateItem, DeleteItem; no BatchWriteItem, which takes no condition). Empty (the default): the role cannot write any table, for diff and verify runs."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for a in var.write_target_table_arns : can(regex("^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:[0-9]{12}:table/[A-Za-z0-9_.-]{3,255}$", a))])
    error_message = "DDB-SEC-01: write_target_table_arns must be table ARNs (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME), not wildcards."
  }
}

variable "data_kms_key_arns" {
  description = "KMS keys of the export and run buckets (SSE-KMS) and of customer-managed table encryption that the shards decrypt and encrypt with; empty when they use AWS-owned keys."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for k in var.data_kms_key_arns : can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[0-9a-f-]+$", k))])
    error_message = "DDB-SEC-04: data_kms_key_arns must be KMS key ARNs (arn:aws:kms:REGION:ACCOUNT:key/ID), not aliases or wildcards."
  }
}

variable "kubernetes_service_account" {
  description = "Also let a Kubernetes service account assume the job role through IRSA (examples/kubernetes): the cluster's IAM OIDC provider ARN, the namespace and the service account's name. null: only the Batch tasks assume it."
  type = object({
    oidc_provider_arn = string
    namespace         = string
    name              = string
  })
  default = null

  validation {
    condition = var.kubernetes_service_account == null || (
      can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:oidc-provider/.+$", try(var.kubernetes_service_account.oidc_provider_arn, ""))) &&
      can(regex("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", try(var.kubernetes_service_account.namespace, ""))) &&
      can(regex("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", try(var.kubernetes_service_account.name, "")))
    )
    error_message = "DDB-SEC-01: kubernetes_service_account must be { oidc_provider_arn = \"arn:aws:iam::ACCOUNT:oidc-provider/oidc.eks.REGION.amazonaws.com/id/ID\", namespace = \"dynops\", name = \"dynops-diff\" }: one service account, no wildcards."
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
