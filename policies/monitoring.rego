package dynops.plan

# DDB-MON-01: every table has at least one CloudWatch alarm on its TableName
# (a dimension of the alarm, or of a metric in its metric_query).
# It applies when data.guideline.require_alarms is true, or when the plan
# already holds alarms (then it must hold them for every table).
alarms := of_type("aws_cloudwatch_metric_alarm")

alarms_required if data.guideline.require_alarms == true

alarms_required if count(alarms) > 0

deny contains msg if {
	alarms_required
	some r in tables
	name := r.change.after.name
	not alarmed(name)
	msg := sprintf("DDB-MON-01: %s: table %q has no CloudWatch alarm (aws_cloudwatch_metric_alarm with dimension TableName = %q); add the monitoring module", [r.address, name, name])
}

alarmed(name) if {
	some a in alarms
	a.change.after.dimensions.TableName == name
}

# Metric-math alarms carry the dimension on each metric of metric_query.
alarmed(name) if {
	some a in alarms
	some q in a.change.after.metric_query
	some m in q.metric
	m.dimensions.TableName == name
}
