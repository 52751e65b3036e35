"""Control paths: one grammar on every adapter that answers them, and the path written
from an element's description locates that element again."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from semledger.adapters import (
    ControlStep,
    DataError,
    PathStep,
    create_surface,
    format_control_path,
    parse_control_path,
)
from semledger.adapters._atspi import AtspiSurface
from semledger.adapters._atspi_recorded import RecordedBackend, load_recording
from semledger.adapters._session import SessionInit
from semledger.adapters._surface import AgentSurface


def test_a_path_parses_into_names_positions_and_bare_roles() -> None:
    assert parse_control_path('window[Main]/group[2]/button["a/b]"]/text/Button["7"]') == [
        ControlStep("window", name="Main"),
        ControlStep("group", index=2),
        ControlStep("button", name="a/b]"),
        ControlStep("text"),
        ControlStep("Button", name="7"),
    ]


@pytest.mark.parametrize(
    ("path", "step"), [("window[x]/[3]", 1), ("window[x", 0), ("a/b/c[d]e", 2)]
)
def test_a_step_that_does_not_parse_is_a_data_error_naming_it(path: str, step: int) -> None:
    with pytest.raises(DataError) as caught:
        parse_control_path(path)
    assert caught.value.path == f"controlPath[{step}]"


@given(
    st.lists(
        st.builds(
            PathStep,
            st.sampled_from(["window", "push button", "Button", "list item"]),
            st.none() | st.text(),
            st.integers(0, 9),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_a_written_path_reads_back_as_the_names_and_positions_it_was_written_from(
    steps: list[PathStep],
) -> None:
    assert parse_control_path(format_control_path(steps)) == [
        ControlStep(s.role, name=s.name) if s.name else ControlStep(s.role, index=s.index + 1)
        for s in steps
    ]


@pytest.mark.parametrize(
    "path",
    [
        'window[Main]/group[2]/button["7"]',
        'Window[Main]/list item[3]/text/push button[""]/button["a/b]"]',
        "group[1]/button[0]",
    ],
)
def test_a_parsed_path_is_written_back_as_it_was_read(path: str) -> None:
    assert format_control_path(parse_control_path(path)) == path


@given(
    st.lists(
        st.one_of(
            st.builds(ControlStep, st.sampled_from(["window", "push button", "Button"])),
            st.builds(ControlStep, st.sampled_from(["window", "list item"]), name=st.text()),
            st.builds(ControlStep, st.sampled_from(["group", "Button"]), index=st.integers(0, 99)),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_parsed_steps_written_and_read_again_are_the_same_steps(steps: list[ControlStep]) -> None:
    assert parse_control_path(format_control_path(steps)) == steps


async def _every_element_is_found_by_the_path_of_its_description(surface: AgentSurface) -> None:
    snapshot = await surface.snapshot()
    assert len(snapshot.nodes) > 5
    pathless = 0
    for node in snapshot.nodes:
        if "hidden" in node.states:
            continue  # located by no kind of candidate
        steps = (await surface.describe(node.ref)).path
        if not steps:  # the application itself on AT-SPI: paths start at its windows
            pathless += 1
            continue
        path = format_control_path(steps)
        assert node.ref in await surface.locate({"by": "controlPath", "value": path}), path
    assert pathless <= 1


@pytest.mark.parametrize("app", ["gallery", "todo"])
async def test_on_the_runtime_every_element_is_found_by_the_path_of_its_description(
    app: str,
) -> None:
    surface = create_surface({"adapter": "runtime", "app": f"semledger.examples.{app}:app"})
    await surface.open({})
    try:
        await _every_element_is_found_by_the_path_of_its_description(surface)
    finally:
        await surface.close()


async def test_on_at_spi_every_element_is_found_by_the_path_of_its_description() -> None:
    recording = load_recording("gtk_fixture")
    surface = AtspiSurface({"settle_ms": 0}, backend=RecordedBackend(recording))
    await surface.open(SessionInit(process_name=recording["application"]["name"]))
    try:
        await _every_element_is_found_by_the_path_of_its_description(surface)
    finally:
        await surface.close()


async def test_on_the_runtime_roles_match_in_any_case_and_a_bad_path_is_a_data_error() -> None:
    surface = create_surface({"adapter": "runtime", "app": "semledger.examples.counter:app"})
    await surface.open({})
    try:
        [increment] = await surface.locate({"by": "automationId", "value": "counter.increment"})
        for path in ("group/button[Increment]", 'Group/BUTTON["Increment"]'):
            assert await surface.locate({"by": "controlPath", "value": path}) == [increment]
        with pytest.raises(DataError):
            await surface.locate({"by": "controlPath", "value": "group/[2]"})
    finally:
        await surface.close()
