"""The gallery: every role, every action kind and every composition mode at least once (SPEC §5).

A tour of the semantics vocabulary for agents, docs and tests: a scroll view, a slider, a combo
box with options, tabs, a modal dialog, a merged card, a section that hides and shows, a
password field, relations, and a deliberate pair of nodes sharing ``gallery.duplicate`` (so
the snapshot always carries one ``duplicate_semantic_id`` issue while the dialog is closed).
Every interactive node has a semantic id ``gallery.<something>``.
"""

from __future__ import annotations

import math

import attrs

from semledger.runtime import (
    ActionKind,
    App,
    Checked,
    Collection,
    Composition,
    Handler,
    Live,
    Numeric,
    Proposal,
    Reject,
    Relation,
    Role,
    SemanticsAction,
    State,
    View,
    button,
    checkbox,
    column,
    group,
    lazy,
    node,
    row,
    scroll_view,
    send,
    text,
    text_field,
)

VOLUME_MIN = 0.0
VOLUME_MAX = 100.0
VOLUME_STEP = 10.0
PASSWORD_MIN = 8
SCROLL_ITEMS = 12
SCROLL_HEIGHT = 96.0
FRUITS = ("Apple", "Banana", "Cherry")
SIZES = ("Small", "Medium", "Large")
ALIGNMENTS = ("Left", "Center", "Right")
TABS = ("Overview", "Details", "History")
TAB_TEXT = {
    "Overview": "What the gallery shows",
    "Details": "Every role and action kind",
    "History": "Nothing has happened yet",
}
LINKS = (("Home", "https://example.com/"), ("Docs", "https://example.com/docs"))
SEAT_ROWS = ("A", "B")
SEAT_COLUMNS = 3
SCORES = (("Ada", "12"), ("Grace", "9"))
MENU_COMMANDS = ("Copy", "Paste")


@attrs.frozen
class Folder:
    """A tree item; ``children`` are leaves (names), shown while the folder is expanded."""

    name: str
    children: tuple[str, ...] = ()


FOLDERS = (
    Folder("src", ("app", "view")),
    Folder("docs", ("index",)),
    Folder("readme"),
)


@attrs.frozen
class Model:
    status: str = "Ready"
    visited: str | None = None
    dark_mode: bool = False
    size: str = "Medium"
    alignment: str = "Left"
    menu_open: bool = False
    username: str = ""
    password: str = ""
    signed_in_as: str | None = None
    remember: bool = False
    volume: float = 50.0
    fruit: str | None = None
    fruit_open: bool = False
    tab: str = "Overview"
    expanded_folders: frozenset[str] = frozenset()
    seats: frozenset[str] = frozenset()
    section_shown: bool = False
    pings: int = 0
    dialog_open: bool = False


@attrs.frozen
class FollowLink:
    url: str


@attrs.frozen
class ToggleDarkMode:
    pass


@attrs.frozen
class ChooseSize:
    size: str


@attrs.frozen
class Align:
    alignment: str


@attrs.frozen
class ShowHelp:
    pass


@attrs.frozen
class OpenMenu:
    pass


@attrs.frozen
class CloseMenu:
    pass


@attrs.frozen
class RunCommand:
    name: str


@attrs.frozen
class SetUsername:
    text: str


@attrs.frozen
class SetPassword:
    text: str


@attrs.frozen
class ToggleRemember:
    pass


@attrs.frozen
class SignIn:
    pass


@attrs.frozen
class StepVolume:
    steps: int


@attrs.frozen
class SetVolume:
    value: float


@attrs.frozen
class OpenFruits:
    pass


@attrs.frozen
class CloseFruits:
    pass


@attrs.frozen
class ChooseFruit:
    name: str


@attrs.frozen
class SelectTab:
    name: str


@attrs.frozen
class ExpandFolder:
    name: str


@attrs.frozen
class CollapseFolder:
    name: str


@attrs.frozen
class ToggleSeat:
    seat: str


@attrs.frozen
class OpenCard:
    pass


@attrs.frozen
class ToggleSection:
    pass


@attrs.frozen
class Ping:
    pass


@attrs.frozen
class PressDuplicate:
    which: int


@attrs.frozen
class OpenDialog:
    pass


@attrs.frozen
class CloseDialog:
    confirmed: bool = False


Msg = (
    FollowLink
    | ToggleDarkMode
    | ChooseSize
    | Align
    | ShowHelp
    | OpenMenu
    | CloseMenu
    | RunCommand
    | SetUsername
    | SetPassword
    | ToggleRemember
    | SignIn
    | StepVolume
    | SetVolume
    | OpenFruits
    | CloseFruits
    | ChooseFruit
    | SelectTab
    | ExpandFolder
    | CollapseFolder
    | ToggleSeat
    | OpenCard
    | ToggleSection
    | Ping
    | PressDuplicate
    | OpenDialog
    | CloseDialog
)

MESSAGE_TYPES: tuple[type, ...] = (
    FollowLink,
    ToggleDarkMode,
    ChooseSize,
    Align,
    ShowHelp,
    OpenMenu,
    CloseMenu,
    RunCommand,
    SetUsername,
    SetPassword,
    ToggleRemember,
    SignIn,
    StepVolume,
    SetVolume,
    OpenFruits,
    CloseFruits,
    ChooseFruit,
    SelectTab,
    ExpandFolder,
    CollapseFolder,
    ToggleSeat,
    OpenCard,
    ToggleSection,
    Ping,
    PressDuplicate,
    OpenDialog,
    CloseDialog,
)
"""Every message type, so the log can encode and decode them."""


def init() -> Model:
    return Model()


def password_error(password: str) -> str | None:
    """Why the password is not acceptable (an empty one is not yet an error), or None."""
    if password and len(password) < PASSWORD_MIN:
        return f"Password must be at least {PASSWORD_MIN} characters"
    return None


def _clamp_volume(value: float) -> float:
    return min(max(value, VOLUME_MIN), VOLUME_MAX)


def _toggled(items: frozenset[str], item: str) -> frozenset[str]:
    return items - {item} if item in items else items | {item}


def update(model: Model, msg: Msg) -> Model:
    match msg:
        case FollowLink(url=url):
            return attrs.evolve(model, visited=url, status=f"Opened {url}")
        case ToggleDarkMode():
            dark = not model.dark_mode
            status = f"Dark mode {'on' if dark else 'off'}"
            return attrs.evolve(model, dark_mode=dark, status=status)
        case ChooseSize(size=size):
            return attrs.evolve(model, size=size, status=f"Size {size}")
        case Align(alignment=alignment):
            return attrs.evolve(model, alignment=alignment, status=f"Aligned {alignment.lower()}")
        case ShowHelp():
            return attrs.evolve(model, status="Help: every widget explains itself")
        case OpenMenu():
            return attrs.evolve(model, menu_open=True)
        case CloseMenu():
            return attrs.evolve(model, menu_open=False)
        case RunCommand(name=name):
            return attrs.evolve(model, menu_open=False, status=f"{name} chosen")
        case SetUsername(text=username):
            return attrs.evolve(model, username=username)
        case SetPassword(text=password):
            return attrs.evolve(model, password=password)
        case ToggleRemember():
            return attrs.evolve(model, remember=not model.remember)
        case SignIn():
            return attrs.evolve(
                model, signed_in_as=model.username, status=f"Signed in as {model.username}"
            )
        case StepVolume(steps=steps):
            volume = _clamp_volume(model.volume + steps * VOLUME_STEP)
            return attrs.evolve(model, volume=volume, status=f"Volume {volume:g}%")
        case SetVolume(value=value):
            return attrs.evolve(model, volume=value, status=f"Volume {value:g}%")
        case OpenFruits():
            return attrs.evolve(model, fruit_open=True)
        case CloseFruits():
            return attrs.evolve(model, fruit_open=False)
        case ChooseFruit(name=name):
            return attrs.evolve(model, fruit=name, fruit_open=False, status=f"Fruit {name}")
        case SelectTab(name=name):
            return attrs.evolve(model, tab=name)
        case ExpandFolder(name=name):
            return attrs.evolve(model, expanded_folders=model.expanded_folders | {name})
        case CollapseFolder(name=name):
            return attrs.evolve(model, expanded_folders=model.expanded_folders - {name})
        case ToggleSeat(seat=seat):
            return attrs.evolve(model, seats=_toggled(model.seats, seat))
        case OpenCard():
            return attrs.evolve(model, status="Release notes opened")
        case ToggleSection():
            return attrs.evolve(model, section_shown=not model.section_shown)
        case Ping():
            return attrs.evolve(model, pings=model.pings + 1, status=f"Pinged {model.pings + 1}")
        case PressDuplicate(which=which):
            return attrs.evolve(model, status=f"Duplicate {which} pressed")
        case OpenDialog():
            return attrs.evolve(model, dialog_open=True)
        case CloseDialog(confirmed=confirmed):
            status = "Changes discarded" if confirmed else model.status
            return attrs.evolve(model, dialog_open=False, status=status)
    raise TypeError(f"not a gallery message: {msg!r}")


# ---- view -------------------------------------------------------------------------------


def _send(msg: Msg) -> Handler[Msg]:
    """`send`, typed with the gallery's message union (views are invariant in their message)."""
    return send(msg)


def _heading(label: str, level: int = 2) -> View[Msg]:
    return node(Role.HEADING, label=label, level=level)


def _navigation(model: Model) -> View[Msg]:
    links: list[View[Msg]] = [
        node(
            Role.LINK,
            label=label,
            url=url,
            semantic_id=f"gallery.link.{label.lower()}",
            handlers={ActionKind.ACTIVATE: _send(FollowLink(url))},
            state=State(selected=model.visited == url),
        )
        for label, url in LINKS
    ]
    return node(Role.NAVIGATION, *links, label="Site", semantic_id="gallery.nav")


def _controls(model: Model) -> View[Msg]:
    radios: list[View[Msg]] = [
        node(
            Role.RADIO,
            label=size,
            semantic_id=f"gallery.size.{size.lower()}",
            state=State(checked=Checked.CHECKED if model.size == size else Checked.UNCHECKED),
            collection=Collection(set_size=len(SIZES), set_position=i),
            handlers={ActionKind.ACTIVATE: _send(ChooseSize(size))},
        )
        for i, size in enumerate(SIZES, start=1)
    ]
    alignment: list[View[Msg]] = [
        node(
            Role.BUTTON,
            label=name,
            semantic_id=f"gallery.align.{name.lower()}",
            state=State(pressed=model.alignment == name),
            handlers={ActionKind.ACTIVATE: _send(Align(name))},
        )
        for name in ALIGNMENTS
    ]
    open_menu = _send(OpenMenu())
    menu: list[View[Msg]] = []
    if model.menu_open:
        commands: list[View[Msg]] = [
            button(name, RunCommand(name), semantic_id=f"gallery.menu.{name.lower()}")
            for name in MENU_COMMANDS
        ]
        menu.append(
            node(
                Role.MENU,
                *commands,
                label="More actions",
                semantic_id="gallery.menu",
                handlers={ActionKind.DISMISS: _send(CloseMenu())},
                key="menu",
            )
        )
    return group(
        _heading("Controls"),
        node(
            Role.SWITCH,
            label="Dark mode",
            semantic_id="gallery.dark_mode",
            state=State(checked=Checked.CHECKED if model.dark_mode else Checked.UNCHECKED),
            handlers={ActionKind.ACTIVATE: _send(ToggleDarkMode())},
        ),
        group(*radios, label="Size", semantic_id="gallery.size"),
        # The row is Transparent (no semantics of its own): its buttons lift into the group.
        node(Role.BUTTON_GROUP, row(*alignment), label="Alignment", semantic_id="gallery.align"),
        button(
            "Help",
            ShowHelp(),
            semantic_id="gallery.help",
            relations={Relation.DESCRIBED_BY: ["gallery.help.tooltip"]},
        ),
        node(Role.TOOLTIP, label="Explains every widget", semantic_id="gallery.help.tooltip"),
        node(
            Role.BUTTON,
            label="More",
            semantic_id="gallery.more",
            state=State(expanded=model.menu_open),
            handlers={ActionKind.ACTIVATE: open_menu, ActionKind.SHOW_MENU: open_menu},
        ),
        *menu,
        label="Controls",
    )


def _sign_in_handler(model: Model) -> Handler[Msg]:
    username, password = model.username, model.password

    def submit(_action: SemanticsAction) -> Proposal[Msg] | Reject:
        if not username.strip():
            return Reject("a username is required")
        if not password or password_error(password) is not None:
            return Reject(f"a password of at least {PASSWORD_MIN} characters is required")
        return Proposal((SignIn(),))

    return submit


def _form(model: Model) -> View[Msg]:
    submit = _sign_in_handler(model)
    error = password_error(model.password)
    password_relations: dict[Relation, list[str]] = {
        Relation.LABELLED_BY: ["gallery.password.label"],
        Relation.DESCRIBED_BY: ["gallery.password.hint"],
    }
    if error is not None:
        password_relations[Relation.ERROR_MESSAGE] = ["gallery.password.error"]
    return node(
        Role.FORM,
        _heading("Sign in"),
        node(
            Role.FORM_FIELD,
            text_field(
                "Username",
                model.username,
                on_set_text=SetUsername,
                on_submit=submit,
                semantic_id="gallery.username",
            ),
            label="Username",
        ),
        node(
            Role.FORM_FIELD,
            text("Password", semantic_id="gallery.password.label"),
            text_field(
                "Password",
                model.password,
                on_set_text=SetPassword,
                on_submit=submit,
                password=True,
                invalid=error is not None,
                semantic_id="gallery.password",
                relations=password_relations,
            ),
            text(None, f"At least {PASSWORD_MIN} characters", semantic_id="gallery.password.hint"),
            node(
                Role.ALERT, value=error, live=Live.ASSERTIVE, semantic_id="gallery.password.error"
            ),
            label="Password",
        ),
        checkbox("Remember me", model.remember, ToggleRemember(), semantic_id="gallery.remember"),
        button("Sign in", handlers={ActionKind.ACTIVATE: submit}, semantic_id="gallery.sign_in"),
        label="Sign in",
        semantic_id="gallery.form",
        handlers={ActionKind.SUBMIT: submit},
        # A form takes submit but is not a focus stop (its fields and button are).
        focusable=False,
    )


def _set_volume(action: SemanticsAction) -> Proposal[Msg] | Reject:
    value = getattr(action, "value", math.nan)
    if not VOLUME_MIN <= value <= VOLUME_MAX:
        return Reject(f"volume must be between {VOLUME_MIN:g} and {VOLUME_MAX:g}")
    return Proposal((SetVolume(float(value)),))


def _levels(model: Model) -> View[Msg]:
    filled = [
        bool(model.username),
        bool(model.password) and password_error(model.password) is None,
        model.fruit is not None,
        model.signed_in_as is not None,
    ]
    percent = 100.0 * sum(filled) / len(filled)
    return group(
        _heading("Levels"),
        node(
            Role.SLIDER,
            label="Volume",
            semantic_id="gallery.volume",
            numeric=Numeric(
                current=model.volume,
                min=VOLUME_MIN,
                max=VOLUME_MAX,
                step=VOLUME_STEP,
                value_text=f"{model.volume:g}%",
            ),
            handlers={
                ActionKind.INCREMENT: _send(StepVolume(1)),
                ActionKind.DECREMENT: _send(StepVolume(-1)),
                ActionKind.SET_NUMERIC_VALUE: _set_volume,
            },
        ),
        node(
            Role.PROGRESS,
            label="Profile complete",
            semantic_id="gallery.progress",
            numeric=Numeric(current=percent, min=0.0, max=100.0, value_text=f"{percent:g}%"),
        ),
        label="Levels",
    )


def _combo_box(model: Model) -> View[Msg]:
    options: list[View[Msg]] = []
    relations: dict[Relation, list[str]] = {}
    if model.fruit_open:
        options = [
            node(
                Role.OPTION,
                label=name,
                semantic_id=f"gallery.fruit.{name.lower()}",
                state=State(selected=model.fruit == name),
                collection=Collection(set_size=len(FRUITS), set_position=i),
                handlers={ActionKind.SELECT: _send(ChooseFruit(name))},
                key=name,
            )
            for i, name in enumerate(FRUITS, start=1)
        ]
        if model.fruit is not None:
            relations[Relation.ACTIVE_DESCENDANT] = [f"gallery.fruit.{model.fruit.lower()}"]
    toggle: dict[ActionKind, Handler[Msg]] = (
        {ActionKind.COLLAPSE: _send(CloseFruits())}
        if model.fruit_open
        else {ActionKind.EXPAND: _send(OpenFruits())}
    )
    return node(
        Role.COMBO_BOX,
        *options,
        label="Fruit",
        value=model.fruit or "",
        semantic_id="gallery.fruit",
        state=State(expanded=model.fruit_open),
        handlers=toggle,
        relations=relations,
    )


def _tabs(model: Model) -> View[Msg]:
    tabs: list[View[Msg]] = [
        node(
            Role.TAB,
            label=name,
            semantic_id=f"gallery.tab.{name.lower()}",
            state=State(selected=model.tab == name),
            collection=Collection(set_size=len(TABS), set_position=i),
            handlers={ActionKind.SELECT: _send(SelectTab(name))},
            relations={Relation.CONTROLS: ["gallery.tabpanel"]},
        )
        for i, name in enumerate(TABS, start=1)
    ]
    return group(
        group(*tabs, label="Tabs", semantic_id="gallery.tabs"),
        group(
            text(None, TAB_TEXT[model.tab]),
            label=model.tab,
            semantic_id="gallery.tabpanel",
            relations={Relation.LABELLED_BY: [f"gallery.tab.{model.tab.lower()}"]},
        ),
        label="Tabbed panel",
    )


def _scroll_entries() -> tuple[View[Msg], ...]:
    items: list[View[Msg]] = [
        node(
            Role.LIST_ITEM,
            label=f"Entry {n}",
            semantic_id=f"gallery.scroll.item.{n}",
            collection=Collection(set_size=SCROLL_ITEMS, set_position=n),
        )
        for n in range(1, SCROLL_ITEMS + 1)
    ]
    return (node(Role.LIST, *items, label="Log entries", semantic_id="gallery.scroll.list"),)


def _scroller() -> View[Msg]:
    """More content (12 rows of 24) than the viewport's height (96): scrolling moves frames."""
    return scroll_view(
        lazy("entries", _scroll_entries),
        height=SCROLL_HEIGHT,
        label="Log",
        semantic_id="gallery.scroll",
    )


def _tree(model: Model) -> View[Msg]:
    def leaf(folder: Folder, name: str, position: int) -> View[Msg]:
        return node(
            Role.TREE_ITEM,
            label=name,
            semantic_id=f"gallery.tree.{folder.name}.{name}",
            level=2,
            collection=Collection(set_size=len(folder.children), set_position=position),
            key=name,
        )

    def item(folder: Folder, position: int) -> View[Msg]:
        expanded = folder.name in model.expanded_folders
        handlers: dict[ActionKind, Handler[Msg]] = {}
        children: list[View[Msg]] = []
        if folder.children:
            if expanded:
                handlers[ActionKind.COLLAPSE] = _send(CollapseFolder(folder.name))
                children = [leaf(folder, n, i) for i, n in enumerate(folder.children, start=1)]
            else:
                handlers[ActionKind.EXPAND] = _send(ExpandFolder(folder.name))
        return node(
            Role.TREE_ITEM,
            *children,
            label=folder.name,
            semantic_id=f"gallery.tree.{folder.name}",
            level=1,
            state=State(expanded=expanded if folder.children else None),
            collection=Collection(set_size=len(FOLDERS), set_position=position),
            handlers=handlers,
            key=folder.name,
        )

    items = [item(folder, i) for i, folder in enumerate(FOLDERS, start=1)]
    return node(Role.TREE, *items, label="Files", semantic_id="gallery.tree")


def _grid(model: Model) -> View[Msg]:
    rows: list[View[Msg]] = []
    for r, letter in enumerate(SEAT_ROWS):
        cells: list[View[Msg]] = []
        for c in range(SEAT_COLUMNS):
            seat = f"{letter}{c + 1}"
            cells.append(
                node(
                    Role.CELL,
                    label=seat,
                    semantic_id=f"gallery.seat.{seat.lower()}",
                    state=State(selected=seat in model.seats),
                    collection=Collection(row_index=r, column_index=c),
                    handlers={ActionKind.SELECT: _send(ToggleSeat(seat))},
                )
            )
        rows.append(node(Role.ROW, *cells, collection=Collection(row_index=r)))
    return node(
        Role.GRID,
        *rows,
        label="Seats",
        semantic_id="gallery.seats",
        collection=Collection(row_count=len(SEAT_ROWS), column_count=SEAT_COLUMNS),
    )


def _table_rows() -> tuple[View[Msg], ...]:
    lines = (("Player", "Score"), *SCORES)
    return tuple(
        node(
            Role.ROW,
            *(
                node(
                    Role.CELL,
                    label=value,
                    collection=Collection(row_index=r, column_index=c),
                )
                for c, value in enumerate(line)
            ),
            collection=Collection(row_index=r),
        )
        for r, line in enumerate(lines)
    )


def _table() -> View[Msg]:
    return node(
        Role.TABLE,
        lazy("scores", _table_rows),
        label="Scores",
        semantic_id="gallery.table",
        collection=Collection(row_count=len(SCORES) + 1, column_count=2),
    )


def _compositions(model: Model) -> View[Msg]:
    card = node(
        Role.GROUP,
        text("Release notes"),
        text("Version 1.0 is out"),
        semantic_id="gallery.card",
        composition=Composition.MERGE_DESCENDANTS,
        handlers={ActionKind.ACTIVATE: _send(OpenCard())},
    )
    boundary = node(
        Role.NONE,
        text("Boundary line one"),
        text("Boundary line two"),
        semantic_id="gallery.boundary",
        composition=Composition.BOUNDARY,
    )
    section = node(
        Role.GROUP,
        text("Details", f"Pinged {model.pings} times"),
        button("Ping", Ping(), semantic_id="gallery.section.ping"),
        label="Details",
        semantic_id="gallery.section",
        composition=Composition.TRANSPARENT if model.section_shown else Composition.HIDDEN,
        key="section",
    )
    return group(
        _heading("Composition"),
        card,
        boundary,
        node(
            Role.BUTTON,
            label="Hide details" if model.section_shown else "Show details",
            semantic_id="gallery.section.toggle",
            state=State(expanded=model.section_shown),
            handlers={ActionKind.ACTIVATE: _send(ToggleSection())},
        ),
        section,
        label="Composition",
    )


def _dialog() -> View[Msg]:
    return node(
        Role.DIALOG,
        _heading("Discard changes?"),
        button("Discard", CloseDialog(confirmed=True), semantic_id="gallery.dialog.confirm"),
        button("Keep", CloseDialog(), semantic_id="gallery.dialog.cancel"),
        label="Discard changes?",
        semantic_id="gallery.dialog",
        state=State(modal=True),
        handlers={ActionKind.DISMISS: _send(CloseDialog())},
        key="dialog",
    )


def view(model: Model) -> View[Msg]:
    main: View[Msg] = node(
        Role.MAIN,
        _heading("Semantics gallery", level=1),
        node(
            Role.IMAGE,
            label="Gallery logo",
            url="https://example.com/logo.png",
            description="A ledger with a magnifying glass",
        ),
        node(Role.SEPARATOR),
        _controls(model),
        _form(model),
        _levels(model),
        _combo_box(model),
        _tabs(model),
        _scroller(),
        _tree(model),
        _grid(model),
        _table(),
        _compositions(model),
        node(
            Role.WEB_VIEW,
            label="Embedded page",
            url="https://example.com/embed",
            semantic_id="gallery.web",
        ),
        group(
            button("Duplicate one", PressDuplicate(1), semantic_id="gallery.duplicate"),
            button("Duplicate two", PressDuplicate(2), semantic_id="gallery.duplicate"),
            label="Duplicates",
        ),
        button("Open dialog", OpenDialog(), semantic_id="gallery.dialog.open"),
        label="Gallery",
        semantic_id="gallery.main",
    )
    return column(
        _navigation(model),
        main,
        node(Role.STATUS, value=model.status, live=Live.POLITE, semantic_id="gallery.status"),
        *((_dialog(),) if model.dialog_open else ()),
    )


app: App[Model, Msg] = App(
    init=init,
    update=update,
    view=view,
    name="gallery",
    message_types=MESSAGE_TYPES,
    model_type=Model,
)

__all__ = [
    "FOLDERS",
    "MESSAGE_TYPES",
    "Align",
    "ChooseFruit",
    "ChooseSize",
    "CloseDialog",
    "CloseFruits",
    "CloseMenu",
    "CollapseFolder",
    "ExpandFolder",
    "Folder",
    "FollowLink",
    "Model",
    "OpenCard",
    "OpenDialog",
    "OpenFruits",
    "OpenMenu",
    "Ping",
    "PressDuplicate",
    "RunCommand",
    "SelectTab",
    "SetPassword",
    "SetUsername",
    "SetVolume",
    "ShowHelp",
    "SignIn",
    "StepVolume",
    "ToggleDarkMode",
    "ToggleRemember",
    "ToggleSeat",
    "ToggleSection",
    "app",
    "init",
    "password_error",
    "update",
    "view",
]
