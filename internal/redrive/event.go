package redrive

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// BuildEvent rebuilds the event an event source mapping delivers to its
// function for these stream records: {"Records": [...]}, each record as
// GetRecords returned it (eventID, eventName, eventVersion, eventSource,
// awsRegion, dynamodb{ApproximateCreationDateTime (epoch seconds), Keys,
// NewImage, OldImage, SequenceNumber, SizeBytes, StreamViewType},
// userIdentity for TTL deletes) plus eventSourceARN, the stream's ARN.
func BuildEvent(streamArn string, recs []types.Record) (events.DynamoDBEvent, error) {
	ev := events.DynamoDBEvent{Records: make([]events.DynamoDBEventRecord, 0, len(recs))}
	for _, r := range recs {
		d := r.Dynamodb
		if d == nil {
			return ev, fmt.Errorf("stream record %s has no dynamodb section", aws.ToString(r.EventID))
		}
		keys, err := convertMap(d.Keys)
		if err != nil {
			return ev, err
		}
		newImage, err := convertMap(d.NewImage)
		if err != nil {
			return ev, err
		}
		oldImage, err := convertMap(d.OldImage)
		if err != nil {
			return ev, err
		}
		er := events.DynamoDBEventRecord{
			AWSRegion:      aws.ToString(r.AwsRegion),
			EventID:        aws.ToString(r.EventID),
			EventName:      string(r.EventName),
			EventSource:    aws.ToString(r.EventSource),
			EventVersion:   aws.ToString(r.EventVersion),
			EventSourceArn: streamArn,
			Change: events.DynamoDBStreamRecord{
				Keys:           keys,
				NewImage:       newImage,
				OldImage:       oldImage,
				SequenceNumber: aws.ToString(d.SequenceNumber),
				SizeBytes:      aws.ToInt64(d.SizeBytes),
				StreamViewType: string(d.StreamViewType),
			},
		}
		if d.ApproximateCreationDateTime != nil {
			er.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *d.ApproximateCreationDateTime}
		}
		if id := r.UserIdentity; id != nil {
			er.UserIdentity = &events.DynamoDBUserIdentity{Type: aws.ToString(id.Type), PrincipalID: aws.ToString(id.PrincipalId)}
		}
		ev.Records = append(ev.Records, er)
	}
	return ev, nil
}

// KeyString renders a record's key for people: `user_id=u1, sk=2`.
func KeyString(keys map[string]types.AttributeValue) string {
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		var s string
		switch v := keys[k].(type) {
		case *types.AttributeValueMemberS:
			s = strconv.Quote(v.Value)
		case *types.AttributeValueMemberN:
			s = v.Value
		case *types.AttributeValueMemberB:
			s = "b64:" + base64.StdEncoding.EncodeToString(v.Value)
		default:
			s = fmt.Sprintf("%T", v)
		}
		parts = append(parts, k+"="+s)
	}
	return strings.Join(parts, ", ")
}

func convertMap(m map[string]types.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		c, err := convert(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = c
	}
	return out, nil
}

func convert(v types.AttributeValue) (events.DynamoDBAttributeValue, error) {
	switch t := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(t.Value), nil
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(t.Value), nil
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(t.Value), nil
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(t.Value), nil
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute(), nil
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(t.Value), nil
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(t.Value), nil
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(t.Value), nil
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, 0, len(t.Value))
		for _, e := range t.Value {
			c, err := convert(e)
			if err != nil {
				return events.DynamoDBAttributeValue{}, err
			}
			l = append(l, c)
		}
		return events.NewListAttribute(l), nil
	case *types.AttributeValueMemberM:
		m, err := convertMap(t.Value)
		if err != nil {
			return events.DynamoDBAttributeValue{}, err
		}
		return events.NewMapAttribute(m), nil
	default:
		return events.DynamoDBAttributeValue{}, fmt.Errorf("unknown attribute value type %T", v)
	}
}
