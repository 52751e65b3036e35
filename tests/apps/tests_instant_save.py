"""The todo example with a save that finishes as soon as it starts: its result comes in
before the agent's next call."""

from semledger.examples import todo

todo.SAVE_SECONDS = 0
app = todo.app
