"""An app whose one effect raises: the backend it would call is down."""

from __future__ import annotations

import attrs

from semledger.runtime import App, Effect, Next, View, button, column, text


@attrs.frozen
class Load:
    pass


@attrs.frozen
class Loaded:
    pass


async def _fetch() -> Loaded:
    raise ConnectionError("backend down")


def update(model: str, msg: Load | Loaded) -> str | Next[str, Loaded]:
    if isinstance(msg, Load):
        return Next("loading", (Effect(_fetch, name="backend.fetch"),))
    return "loaded"


def view(model: str) -> View[Load]:
    return column(text("Status", model, semantic_id="status"),
                  button("Load", Load(), semantic_id="load"))


app = App(init=lambda: "idle", update=update, view=view, name="failing-effect",
          message_types=(Load, Loaded), model_type=str)
