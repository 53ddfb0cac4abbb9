package audit

// ItemOutcome is what became of an item write.
type ItemOutcome int

// The outcomes of an item write.
const (
	ItemWritten ItemOutcome = iota
	ItemPlanned
	ItemRefused
)
