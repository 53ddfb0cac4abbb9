package guideline

import (
	"context"
)

// Clients are the APIs CheckTables reads: DynamoDB in the home region,
// DynamoDB per replica region, CloudWatch alarms and Lambda consumers.
type Clients struct {
	DB       DynamoDB
	Home     string                       // the home region
	Regional func(region string) DynamoDB // a client for a replica's region
	CW       CloudWatch
	Lambda   Lambda
	// Protected decides whether a table is in a protected env
	// (protect.Policy.TableProtected); nil: every table is (fail closed).
	Protected func(table string, tags map[string]string) bool
}

// CheckTables gathers and evaluates every table: the one code path of
// `dynops check` and the readiness Lambda. progress, when not nil, is called
// before each table.
func CheckTables(ctx context.Context, c Clients, tables, allowedEnvs []string, progress func(i int, table string)) ([]Finding, error) {
	alarms, err := ListAlarms(ctx, c.CW)
	if err != nil {
		return nil, err
	}
	var findings []Finding
	for i, t := range tables {
		if progress != nil {
			progress(i, t)
		}
		s, err := Gather(ctx, c.DB, t)
		if err != nil {
			return nil, err
		}
		GatherReplicas(ctx, c.Regional, c.Home, &s)
		if s.Monitoring, err = GatherMonitoring(ctx, c.Lambda, alarms, s); err != nil {
			return nil, err
		}
		s.AllowedEnv = allowedEnvs
		s.Protected = c.Protected == nil || c.Protected(t, s.Tags)
		findings = append(findings, Evaluate(s)...)
	}
	return findings, nil
}
