"""semledger: agent-operable UIs on committed semantics, every action on the record."""
