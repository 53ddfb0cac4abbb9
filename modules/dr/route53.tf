# Optional Route 53 failover records: PRIMARY answers while its health check
# passes. `dynops dr failover` inverts the health checks of the regions it
# leaves; `dynops dr failback` restores them.

locals {
  endpoints = var.route53 == null ? {} : {
    (local.primary)   = { endpoint = var.route53.primary_endpoint, role = "PRIMARY" }
    (local.secondary) = { endpoint = var.route53.secondary_endpoint, role = "SECONDARY" }
  }
}

resource "aws_route53_health_check" "this" {
  for_each = local.endpoints

  type              = "HTTPS"
  fqdn              = each.value.endpoint
  port              = var.route53.port
  resource_path     = var.route53.path
  failure_threshold = 3
  request_interval  = 30

  tags = merge(local.tags, { Name = "${var.env}-${each.key}", region = each.key })

  lifecycle {
    # dynops dr failover/failback inverts health checks on purpose.
    ignore_changes = [invert_healthcheck]
  }
}

resource "aws_route53_record" "this" {
  for_each = local.endpoints

  zone_id         = var.route53.zone_id
  name            = var.route53.record_name
  type            = "CNAME"
  ttl             = var.route53.ttl
  records         = [each.value.endpoint]
  set_identifier  = "${var.env}-${each.key}"
  health_check_id = aws_route53_health_check.this[each.key].id

  failover_routing_policy {
    type = each.value.role
  }
}
