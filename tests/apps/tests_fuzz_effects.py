"""An uploader whose bug is reached only through its effects: the second upload to finish
crashes the app. An upload takes a minute (a sleep, which the fuzzer's virtual clock skips);
a flaky upload fails, and says so in its message (an effect that raised would be a
counterexample); a stuck one never finishes. A fuzzer that never lets an effect finish
never sees the bug. ``fixed`` is the same app without it."""

from __future__ import annotations

import attrs
import trio

from semledger.runtime import App, Effect, Next, View, button, column, text

UPLOAD_SECONDS = 60.0


class SecondUploadError(RuntimeError):
    """What the uploader raises when a second upload finishes."""


@attrs.frozen
class Model:
    started: int = 0
    uploaded: int = 0


@attrs.frozen
class Upload:
    pass


@attrs.frozen
class UploadFlaky:
    pass


@attrs.frozen
class UploadStuck:
    pass


@attrs.frozen
class Uploaded:
    number: int


@attrs.frozen
class UploadFailed:
    error: str


Msg = Upload | UploadFlaky | UploadStuck | Uploaded | UploadFailed


def _upload(number: int) -> Effect[Msg]:
    async def run() -> Msg:
        await trio.sleep(UPLOAD_SECONDS)
        return Uploaded(number)

    return Effect(run, name="upload")


async def _flaky() -> Msg:
    await trio.sleep(1)
    raise ConnectionError("the server hung up")


async def _flaky_told() -> Msg:
    try:
        return await _flaky()
    except ConnectionError as error:
        return UploadFailed(str(error))


async def _stuck() -> Msg:
    await trio.sleep_forever()
    raise AssertionError("unreachable")


def update(model: Model, msg: Msg, *, buggy: bool = True) -> Model | Next[Model, Msg]:
    started = model.started + 1
    if isinstance(msg, Upload):
        return Next(attrs.evolve(model, started=started), (_upload(started),))
    if isinstance(msg, UploadFlaky):
        return Next(attrs.evolve(model, started=started), (Effect(_flaky_told, name="flaky"),))
    if isinstance(msg, UploadStuck):
        return Next(attrs.evolve(model, started=started), (Effect(_stuck, name="stuck"),))
    if isinstance(msg, UploadFailed):
        return model
    if buggy and model.uploaded == 1:
        raise SecondUploadError(f"upload {msg.number} finished after another one")
    return attrs.evolve(model, uploaded=model.uploaded + 1)


def view(model: Model) -> View[Msg]:
    return column(
        button("Upload", Upload(), semantic_id="up.upload"),
        button("Flaky upload", UploadFlaky(), semantic_id="up.flaky"),
        button("Stuck upload", UploadStuck(), semantic_id="up.stuck"),
        text("Uploaded", str(model.uploaded), semantic_id="up.count"),
    )


app: App[Model, Msg] = App(
    init=lambda: Model(),
    update=update,
    view=view,
    name="uploader",
    message_types=(Upload, UploadFlaky, UploadStuck, Uploaded, UploadFailed),
    model_type=Model,
)

fixed: App[Model, Msg] = attrs.evolve(
    app, update=lambda model, msg: update(model, msg, buggy=False), name="uploader-fixed"
)
