"""An app whose init hangs (a backend call that never returns, say) once it has said it
runs, by touching the file named by the environment's ``SEMLEDGER_TEST_READY``: a test
knows the command driving it is under way, and stuck there until it is interrupted."""

from __future__ import annotations

import os
import time
from pathlib import Path

import attrs

from semledger.runtime import App, View, button, column


@attrs.frozen
class Press:
    pass


def init() -> int:
    Path(os.environ["SEMLEDGER_TEST_READY"]).touch()
    time.sleep(3600)
    return 0


def view(model: int) -> View[Press]:
    return column(button(f"Pressed {model}", Press(), semantic_id="press"))


app = App(init=init, update=lambda model, _msg: model + 1, view=view, name="hung",
          message_types=(Press,), model_type=int)
