package guideline

import (
	"fmt"
	"sort"
	"strings"
)

// Metric is one CloudWatch metric an alarm watches.
type Metric struct {
	Namespace  string
	Name       string
	Dimensions map[string]string
}

// Alarm is what the checks need of a CloudWatch metric alarm: the metrics it
// watches (one, or several in metric math) and how many actions notify someone.
type Alarm struct {
	Name    string
	Metrics []Metric
	Actions int
}

// Consumer is what the checks need of a Lambda event source mapping on a stream.
type Consumer struct {
	UUID         string
	FunctionArn  string
	State        string
	Bisect       bool
	MaxRetries   *int32 // -1: infinite
	MaxRecordAge *int32 // seconds; -1: infinite
	OnFailureArn string // the DLQ, "" when none
}

// FunctionName is the function's name from its ARN (a name stays a name).
func (c Consumer) FunctionName() string {
	parts := strings.Split(c.FunctionArn, ":")
	if len(parts) >= 7 {
		return parts[6]
	}
	return c.FunctionArn
}

// Monitoring is the live monitoring around one table: the account's alarms
// and the consumers of the table's stream.
type Monitoring struct {
	Alarms    []Alarm
	Consumers []Consumer
}

// watching returns the alarms with a metric namespace/name whose dimensions
// include every one of dims.
func (m Monitoring) watching(namespace, name string, dims map[string]string) []Alarm {
	var out []Alarm
	for _, a := range m.Alarms {
		for _, mt := range a.Metrics {
			if mt.Namespace == namespace && mt.Name == name && hasDims(mt.Dimensions, dims) {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

func hasDims(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// alarmed reports whether some alarm on the metric notifies someone; detail
// says what is missing when not.
func (m Monitoring) alarmed(namespace, name string, dims map[string]string) (ok bool, detail string) {
	alarms := m.watching(namespace, name, dims)
	if len(alarms) == 0 {
		return false, fmt.Sprintf("no alarm on %s %s %s", namespace, name, dimString(dims))
	}
	for _, a := range alarms {
		if a.Actions > 0 {
			return true, a.Name
		}
	}
	return false, fmt.Sprintf("alarm %s on %s has no alarm actions: nobody is notified", alarms[0].Name, name)
}

func dimString(dims map[string]string) string {
	keys := make([]string, 0, len(dims))
	for k := range dims {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + dims[k]
	}
	return strings.Join(parts, ",")
}

// evaluateMonitoring checks DDB-MON-01 (table and GSI alarms), DDB-STREAM-04
// (each consumer's mapping) and DDB-STREAM-05 (each consumer's alarms).
func evaluateMonitoring(s TableState, add func(rule, resource string, ok bool, msg string)) {
	m := *s.Monitoring
	name := deref(s.Table.TableName)

	// DDB-MON-01: the mandatory throttling alarm on the table...
	if ok, detail := m.alarmed("AWS/DynamoDB", "ThrottledRequests", map[string]string{"TableName": name}); ok {
		add(Mon01, name, true, "ThrottledRequests alarmed by "+detail)
	} else {
		add(Mon01, name, false, detail+"; apply modules/dynamodb-alarms to the table")
	}
	// ... and throttle events on every GSI.
	for _, g := range s.Table.GlobalSecondaryIndexes {
		idx := deref(g.IndexName)
		dims := map[string]string{"TableName": name, "GlobalSecondaryIndexName": idx}
		var missing []string
		for _, metric := range []string{"ReadThrottleEvents", "WriteThrottleEvents"} {
			if ok, detail := m.alarmed("AWS/DynamoDB", metric, dims); !ok {
				missing = append(missing, detail)
			}
		}
		if len(missing) == 0 {
			add(Mon01, name+"/index/"+idx, true, "read and write throttle events alarmed")
		} else {
			add(Mon01, name+"/index/"+idx, false, strings.Join(missing, "; ")+"; pass the GSI in gsi_names of modules/dynamodb-alarms")
		}
	}

	ss := s.Table.StreamSpecification
	if ss == nil || !isTrue(ss.StreamEnabled) {
		return
	}
	if len(m.Consumers) == 0 {
		add(Stream04, name, true, "stream has no Lambda consumer")
		return
	}
	for _, c := range m.Consumers {
		res := name + "/consumer/" + c.FunctionName()

		// DDB-STREAM-04: the mapping can fail one record without blocking the shard or losing it.
		var problems []string
		if !c.Bisect {
			problems = append(problems, "BisectBatchOnFunctionError is off (one poison record fails its whole batch)")
		}
		if c.MaxRetries == nil || *c.MaxRetries < 0 {
			problems = append(problems, "MaximumRetryAttempts is infinite (-1 blocks the shard until records expire)")
		}
		if c.MaxRecordAge == nil || *c.MaxRecordAge < 0 {
			problems = append(problems, "MaximumRecordAgeInSeconds is infinite (records expire at 24 h unseen)")
		}
		if !strings.Contains(c.OnFailureArn, ":sqs:") {
			problems = append(problems, "no on-failure SQS destination (failed records are dropped)")
		}
		if len(problems) == 0 {
			add(Stream04, res, true, fmt.Sprintf("mapping %s: bisect, %d retries, records up to %d s, DLQ %s", c.UUID, *c.MaxRetries, *c.MaxRecordAge, arnName(c.OnFailureArn)))
		} else {
			add(Stream04, res, false, fmt.Sprintf("mapping %s: %s; deploy the consumer with modules/stream-consumer", c.UUID, strings.Join(problems, "; ")))
		}

		// DDB-STREAM-05: the consumer's lag and its DLQ are alarmed.
		var missing []string
		if ok, detail := m.alarmed("AWS/Lambda", "IteratorAge", map[string]string{"FunctionName": c.FunctionName()}); !ok {
			missing = append(missing, detail)
		}
		if strings.Contains(c.OnFailureArn, ":sqs:") {
			if ok, detail := m.alarmed("AWS/SQS", "ApproximateNumberOfMessagesVisible", map[string]string{"QueueName": arnName(c.OnFailureArn)}); !ok {
				missing = append(missing, detail)
			}
		}
		if len(missing) == 0 {
			add(Stream05, res, true, "IteratorAge and DLQ depth alarmed")
		} else {
			add(Stream05, res, false, strings.Join(missing, "; ")+"; modules/stream-consumer creates both alarms")
		}
	}
}

// arnName is the last ':'-separated part of an ARN (an SQS queue's name).
func arnName(arn string) string {
	return arn[strings.LastIndex(arn, ":")+1:]
}
