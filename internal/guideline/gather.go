package guideline

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// DynamoDB is the part of the DynamoDB API the checks read.
type DynamoDB interface {
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	DescribeContinuousBackups(context.Context, *dynamodb.DescribeContinuousBackupsInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeContinuousBackupsOutput, error)
	DescribeTimeToLive(context.Context, *dynamodb.DescribeTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
	ListTagsOfResource(context.Context, *dynamodb.ListTagsOfResourceInput, ...func(*dynamodb.Options)) (*dynamodb.ListTagsOfResourceOutput, error)
	ListTables(context.Context, *dynamodb.ListTablesInput, ...func(*dynamodb.Options)) (*dynamodb.ListTablesOutput, error)
}

// Gather reads what Evaluate needs about table.
func Gather(ctx context.Context, db DynamoDB, table string) (TableState, error) {
	dt, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return TableState{}, fmt.Errorf("describing table %s: %w", table, err)
	}
	s := TableState{Table: *dt.Table, Tags: map[string]string{}}
	cb, err := db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: &table})
	if err != nil {
		return TableState{}, fmt.Errorf("describing continuous backups of %s: %w", table, err)
	}
	if cb.ContinuousBackupsDescription != nil {
		s.PITR = cb.ContinuousBackupsDescription.PointInTimeRecoveryDescription
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: &table})
	if err != nil {
		return TableState{}, fmt.Errorf("describing TTL of %s: %w", table, err)
	}
	s.TTL = ttl.TimeToLiveDescription
	var next *string
	for {
		tags, err := db.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: dt.Table.TableArn, NextToken: next})
		if err != nil {
			return TableState{}, fmt.Errorf("listing tags of %s: %w", table, err)
		}
		for _, t := range tags.Tags {
			s.Tags[deref(t.Key)] = deref(t.Value)
		}
		if next = tags.NextToken; next == nil {
			break
		}
	}
	return s, nil
}

// TablesWithPrefix lists the tables whose names start with prefix, following every page.
func TablesWithPrefix(ctx context.Context, db DynamoDB, prefix string) ([]string, error) {
	var out []string
	p := dynamodb.NewListTablesPaginator(db, &dynamodb.ListTablesInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing tables: %w", err)
		}
		for _, n := range page.TableNames {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
	}
	return out, nil
}
