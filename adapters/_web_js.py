"""The page-side half of the web adapter: one JavaScript expression evaluated in a frame.

It installs ``window.__semledger`` once per document (a call that finds it missing is sent
again with the library, so a navigation or a new frame needs no init script) and answers the snapshot walk,
ref assignment, ref resolution, element description and point lookup. Roles are ARIA
(explicit ``role``, else the HTML-AAM implicit role), names follow a pared-down accname
(labelledby, label, labels, alt/legend/caption, contents for name-from-content roles,
title, placeholder). Refs live in a per-document registry (a WeakMap one way, WeakRefs the
other) and are stamped on elements as ``data-semledger-ref`` so a Playwright locator can
address them; the numbers come from the Python side, so a ref is never reused after a
navigation, and a document never numbers below what it has handed out itself, so a call whose
answer the Python side gave up waiting for (a page that stalled) leaves no ref to hand out
twice.
"""

# ruff: noqa: E501 - page JavaScript, kept one statement a line
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import attrs

REF_ATTRIBUTE: Final = "data-semledger-ref"

LIBRARY: Final = r"""
(() => {
if (window.__semledger) return window.__semledger;
const ATTR = "data-semledger-ref";
const ARIA = new Set(["alert","alertdialog","application","article","banner","blockquote",
 "button","caption","cell","checkbox","code","columnheader","combobox","complementary",
 "contentinfo","definition","deletion","dialog","directory","document","emphasis","feed",
 "figure","form","generic","grid","gridcell","group","heading","img","insertion","link",
 "list","listbox","listitem","log","main","marquee","math","menu","menubar","menuitem",
 "menuitemcheckbox","menuitemradio","meter","navigation","note","option","paragraph",
 "progressbar","radio","radiogroup","region","row","rowgroup","rowheader","scrollbar",
 "search","searchbox","separator","slider","spinbutton","status","strong","subscript",
 "superscript","switch","tab","table","tablist","tabpanel","term","textbox","time","timer",
 "toolbar","tooltip","tree","treegrid","treeitem"]);
const FROM_CONTENT = new Set(["button","cell","checkbox","columnheader","gridcell","heading",
 "link","menuitem","menuitemcheckbox","menuitemradio","option","radio","row","rowheader",
 "switch","tab","tooltip","treeitem"]);
const COLLECTION = ["setsize", "posinset", "rowindex", "rowcount", "rowspan", "colindex",
 "colcount", "colspan"].map((key) => ["aria-" + key, key]);
const UNFOCUSED = new Set(["BODY", "IFRAME", "FRAME"]);  // a frame's focus is within it
const NESTED_ITEMS = new Set(["group", "treeitem"]);  // a tree item's own name is not theirs
const IMPLICIT_LIVE = {status: "polite", log: "polite", alert: "assertive"};
const CHECKABLE = new Set(["checkbox","radio","switch","menuitemcheckbox","menuitemradio"]);
const INTERACTIVE = new Set(["button","checkbox","combobox","link","listbox","menuitem",
 "menuitemcheckbox","menuitemradio","option","radio","searchbox","slider","spinbutton",
 "switch","tab","textbox","treeitem"]);
const CELLS = new Set(["row","cell","gridcell","columnheader","rowheader"]);
const VALUED = new Set(["slider","spinbutton","progressbar","meter","scrollbar"]);
const SKIP = new Set(["SCRIPT","STYLE","TEMPLATE","NOSCRIPT","HEAD","META","LINK","TITLE"]);
const TAGS = {A:"link",ARTICLE:"article",ASIDE:"complementary",BLOCKQUOTE:"blockquote",
 BUTTON:"button",CAPTION:"caption",CODE:"code",DATALIST:"listbox",DD:"definition",
 DEL:"deletion",DETAILS:"group",DIALOG:"dialog",DT:"term",EM:"emphasis",FIELDSET:"group",
 FIGURE:"figure",FORM:"form",H1:"heading",H2:"heading",H3:"heading",H4:"heading",
 H5:"heading",H6:"heading",HR:"separator",INS:"insertion",LI:"listitem",MAIN:"main",
 MATH:"math",MENU:"list",METER:"meter",NAV:"navigation",OL:"list",OPTGROUP:"group",
 OPTION:"option",OUTPUT:"status",P:"paragraph",PROGRESS:"progressbar",SEARCH:"search",
 STRONG:"strong",SUB:"subscript",SUMMARY:"button",SUP:"superscript",TABLE:"table",
 TBODY:"rowgroup",TEXTAREA:"textbox",TFOOT:"rowgroup",THEAD:"rowgroup",TIME:"time",
 TR:"row",UL:"list",BODY:"document"};
const INPUTS = {button:"button",submit:"button",reset:"button",image:"button",
 file:"button",checkbox:"checkbox",radio:"radio",range:"slider",number:"spinbutton",
 search:"searchbox",email:"textbox",tel:"textbox",text:"textbox",url:"textbox",
 password:"textbox",date:"textbox",time:"textbox","datetime-local":"textbox",
 month:"textbox",week:"textbox"};
const byRef = new Map();
const refOf = new WeakMap();
const secret = new WeakSet();  // inputs seen as password fields: masked still once a "show" toggle makes them text
let next = 1;
const counterFrom = (start) => ({ n: Math.max(start, next) });
const norm = (s) => (s || "").replace(/\s+/g, " ").trim();

const TYPED = new Set(["text", "search", "email", "url", "tel"]);

function editingHost(el) {
  return el.isContentEditable && el.tagName !== "BODY" && el.tagName !== "HTML"
    && !(el.parentElement && el.parentElement.isContentEditable);
}

function role(el) {
  const explicit = el.getAttribute("role");
  if (explicit !== null) {
    for (const token of explicit.trim().split(/\s+/)) {
      if (token === "none" || token === "presentation") return "generic";
      if (ARIA.has(token)) return token;
    }
    return "generic";
  }
  const tag = el.tagName;
  if (editingHost(el)) return "textbox";
  if (tag === "INPUT") {
    const type = (el.getAttribute("type") || "text").toLowerCase();
    if (type === "hidden") return null;
    const r = INPUTS[type] || "textbox";
    if ((r === "textbox" || r === "searchbox") && el.hasAttribute("list")) return "combobox";
    return r;
  }
  if (tag === "SELECT") return (el.multiple || el.size > 1) ? "listbox" : "combobox";
  if (tag === "A" || tag === "AREA") return el.hasAttribute("href") ? "link" : "generic";
  if (tag === "IMG") return el.getAttribute("alt") === "" ? "generic" : "img";
  if (tag === "SECTION") return (el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby")) ? "region" : "generic";
  if (tag === "HEADER" || tag === "FOOTER") {
    if (el.parentElement && el.parentElement.closest("article,aside,main,nav,section")) return "generic";
    return tag === "HEADER" ? "banner" : "contentinfo";
  }
  if (tag === "TD") return el.closest("table") && el.closest("table").getAttribute("role") === "grid" ? "gridcell" : "cell";
  if (tag === "TH") return el.getAttribute("scope") === "row" ? "rowheader" : "columnheader";
  if (tag === "svg") return "img";
  return TAGS[tag] || "generic";
}

function userInvalid(el) {  // a field the browser's own validation refused once the user was at it
  try { return el.willValidate === true && el.matches(":user-invalid"); } catch (e) { return false; }
}

function childrenOf(el) {  // as shown: a shadow root's, a slot's assigned nodes or its fallback
  if (el.shadowRoot) return el.shadowRoot.childNodes;
  if (el.tagName === "SLOT") { const assigned = el.assignedNodes(); if (assigned.length) return assigned; }
  return el.childNodes;
}

function textOf(node, depth, own, shown) {  // shown: whether what is named is, whose hidden parts then say nothing (a hidden label an aria-labelledby names says all of it)
  if (node.nodeType === 3) return node.data;
  if (node.nodeType !== 1 || SKIP.has(node.tagName)) return "";
  const el = node;
  if (depth === 0) shown = el.tagName !== "OPTION" && !isHidden(el);  // an option's text is the select's, whatever its list shows
  else {
    if (el.getAttribute("aria-hidden") === "true" || shown && unrendered(el)) return "";
    if (own && NESTED_ITEMS.has(el.getAttribute("role"))) return "";
    const label = el.getAttribute("aria-label");
    if (label) return " " + label + " ";
    const tag = el.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return " ";
    if (tag === "IMG") return " " + (el.getAttribute("alt") || "") + " ";
  }
  const seen = !shown || visible(el);  // its own text; a child may be made visible again
  let out = "";
  for (const kid of childrenOf(el)) if (seen || kid.nodeType !== 3) out += textOf(kid, depth + 1, own, shown);
  if (el.tagName !== "SPAN" && el.tagName !== "A" && el.tagName !== "B" && el.tagName !== "I"
      && el.tagName !== "EM" && el.tagName !== "STRONG" && el.tagName !== "CODE") out = " " + out + " ";
  return out;
}

function idsText(el, attr) {
  const ids = (el.getAttribute(attr) || "").trim();
  if (!ids) return "";
  const doc = el.getRootNode();
  return norm(ids.split(/\s+/).map((id) => {
    const t = doc.getElementById ? doc.getElementById(id) : null;
    return t ? (t.getAttribute("aria-label") || textOf(t, 0)) : "";
  }).join(" "));
}

function name(el, r) {
  let n = idsText(el, "aria-labelledby");
  if (n) return n;
  n = norm(el.getAttribute("aria-label"));
  if (n) return n;
  const tag = el.tagName;
  if (tag === "INPUT") {
    const type = (el.getAttribute("type") || "text").toLowerCase();
    if (type === "button" || type === "submit" || type === "reset") {
      return norm(el.value) || (type === "submit" ? "Submit" : type === "reset" ? "Reset" : "");
    }
    if (type === "image") return norm(el.getAttribute("alt"));
  }
  if (el.labels && el.labels.length) {
    n = norm(Array.from(el.labels).map((l) => textOf(l, 0)).join(" "));
    if (n) return n;
  }
  if (tag === "IMG" || tag === "AREA") { n = norm(el.getAttribute("alt")); if (n) return n; }
  if (tag === "FIELDSET") { const l = el.querySelector(":scope > legend"); if (l) { n = norm(textOf(l, 0)); if (n) return n; } }
  if (tag === "FIGURE") { const c = el.querySelector(":scope > figcaption"); if (c) { n = norm(textOf(c, 0)); if (n) return n; } }
  if (tag === "TABLE") { const c = el.querySelector(":scope > caption"); if (c) { n = norm(textOf(c, 0)); if (n) return n; } }
  if (tag === "OPTGROUP" || tag === "OPTION") { n = norm(el.getAttribute("label")); if (n) return n; }
  if (tag === "BODY") return norm(document.title);
  if (FROM_CONTENT.has(r) && tag !== "INPUT" && tag !== "SELECT" && tag !== "TEXTAREA") {
    n = norm(textOf(el, 0, r === "treeitem"));
    if (n) return n;
  }
  n = norm(el.getAttribute("title"));
  if (n) return n;
  if (tag === "INPUT" || tag === "TEXTAREA") return norm(el.getAttribute("placeholder"));
  return "";
}

const KEPT_SPACE = new Set(["pre", "pre-wrap", "break-spaces"]);

function editedText(host) {  // an editable element's text, a line per line shown: innerText adds one for each empty line's <br> in its own block (Chromium's <div><br></div>)
  const lines = [];
  let cur = null;  // the line being read, null between lines
  let soft = false;  // whether it ends in a collapsible space, which the line's end drops
  const end = () => { lines.push(soft ? cur.slice(0, -1) : cur ?? ""); cur = null; soft = false; };
  const close = () => { if (cur !== null) end(); };
  const text = (data, ws) => {
    const kept = KEPT_SPACE.has(ws);
    const shown = kept ? data : ws === "pre-line" ? data.replace(/[ \t\r]+/g, " ") : data.replace(/[ \t\n\r]+/g, " ");
    shown.split("\n").forEach((part, i) => {
      if (i) end();
      if (!kept && part.startsWith(" ") && (cur === null || soft)) part = part.slice(1);
      if (!part) return;
      cur = (cur ?? "") + part;
      soft = !kept && part.endsWith(" ");
    });
  };
  const visit = (node, ws) => {
    if (node.nodeType === 3) return text(node.data, ws);
    if (node.nodeType !== 1 || SKIP.has(node.tagName) || unrendered(node)) return;
    if (node.tagName === "BR") return end();  // ends its line; the last in a block ends it no later than the block does
    const style = getComputedStyle(node);
    const block = !/^(inline|contents|ruby)/.test(style.display);
    if (block) close();
    for (const kid of node.childNodes) visit(kid, style.whiteSpace);
    if (block) close();
  };
  const ws = getComputedStyle(host).whiteSpace;
  for (const kid of host.childNodes) visit(kid, ws);
  close();
  return lines.join("\n");
}

function value(el, r) {
  const tag = el.tagName;
  if (tag === "SELECT") return Array.from(el.selectedOptions).map((o) => norm(o.label)).join(", ");
  if (tag === "TEXTAREA") return el.value;
  if (tag === "INPUT") {
    const type = (el.type || "text").toLowerCase();
    if (type === "checkbox" || type === "radio" || type === "button" || type === "submit"
        || type === "reset" || type === "image" || type === "file" && !el.value) return "";
    if (type === "password") secret.add(el);
    if (secret.has(el)) return "\u2022".repeat(Array.from(el.value).length);
    if (type === "file") return Array.from(el.files || []).map((f) => f.name).join(", ");
    return el.value;
  }
  if (tag === "PROGRESS" || tag === "METER") return String(el.value);
  if (r === "textbox" && editingHost(el)) return editedText(el);
  if (VALUED.has(r)) return el.getAttribute("aria-valuetext") || el.getAttribute("aria-valuenow") || "";
  return "";
}

function activeEl() {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a;
}

let looks = null;  // what each element's box and style say, for one read: a row's name and each of its cells' read the same elements

function lookOf(el) {
  if (looks === null) {
    looks = new Map();
    queueMicrotask(() => { looks = null; });  // a read is one call, which nothing changes the page during
  }
  let l = looks.get(el);
  if (l === undefined) { l = {}; looks.set(el, l); }
  return l;
}

function plainlyShown(el, l) {  // a box, and visibility: visible, which answers whether it is hidden, unrendered or visible at once
  if (l.plain === undefined) l.plain = el.checkVisibility({ visibilityProperty: true });
  return l.plain;
}

function isHidden(el) {
  const l = lookOf(el);
  if (l.hidden === undefined) l.hidden = hiddenNow(el, l);
  return l.hidden;
}

function hiddenNow(el, l) {
  if (el.tagName === "OPTION" || el.tagName === "OPTGROUP") {
    const s = el.closest("select, datalist");
    if (s && s.tagName === "DATALIST") return true;
    return s ? isHidden(s) : false;
  }
  if (el.tagName === "BODY") return false;
  if (plainlyShown(el, l)) return false;
  if (getComputedStyle(el).display !== "contents") return true;
  const up = flatParent(el);  // display: contents has no box, which checkVisibility takes for hidden: it is shown as its parent is
  if (up && up.tagName === "DETAILS" && !up.open && el.tagName !== "SUMMARY") return true;  // closed: all but its summary is hidden
  return up ? isHidden(up) : false;
}

function flatParent(el) {  // the element el is shown in: its slot, its parent, or its shadow root's host
  if (el.assignedSlot) return el.assignedSlot;
  if (el.parentElement) return el.parentElement;
  const up = el.parentNode;
  return up && up.nodeType === 11 && up.host ? up.host : null;
}

function unrendered(el) {  // no box, where display: contents leaves its children theirs
  const l = lookOf(el);
  if (l.unrendered === undefined) l.unrendered = !plainlyShown(el, l) && !el.checkVisibility() && getComputedStyle(el).display !== "contents";
  return l.unrendered;
}

function visible(el) {  // its own text shown where it has a box: visibility, which its children inherit
  const l = lookOf(el);
  if (l.visible === undefined) l.visible = plainlyShown(el, l) || getComputedStyle(el).visibility === "visible";
  return l.visible;
}

const TEXTLESS = new Set(["checkbox","radio","button","submit","reset","image","file","hidden"]);  // a range or color input takes its value as text

function unwritable(el, r) {  // a role="textbox" on what takes no text: an input of a type that holds none, or no input, textarea or editable element
  if (r !== "textbox" && r !== "searchbox") return false;
  if (el.tagName === "INPUT") return TEXTLESS.has(el.type);
  return el.tagName !== "TEXTAREA" && !el.isContentEditable;
}

let inertShown = null;  // during a walk, whether the document has inert content at all

function states(el, r, hidden, active) {
  const out = [];
  const tag = el.tagName;
  const native = tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || tag === "BUTTON"
    || tag === "OPTION" || tag === "FIELDSET" || tag === "OPTGROUP";
  if ((native && el.matches(":disabled")) || el.getAttribute("aria-disabled") === "true" || inertShown !== false && el.closest("[inert]")) out.push("disabled");
  if (CHECKABLE.has(r)) {
    let c;
    if (tag === "INPUT" && (el.type === "checkbox" || el.type === "radio")) c = el.indeterminate ? "mixed" : String(el.checked);
    else c = el.getAttribute("aria-checked") || "false";
    if (c === "true") out.push("checked"); else if (c !== "mixed") out.push("unchecked");
  }
  if ((tag === "OPTION" && el.selected) || el.getAttribute("aria-selected") === "true") out.push("selected");
  let ex = el.getAttribute("aria-expanded");
  if (ex === null && tag === "SUMMARY" && el.parentElement && el.parentElement.tagName === "DETAILS") ex = String(el.parentElement.open);
  if (ex === "true") out.push("expanded"); else if (ex === "false") out.push("collapsed");
  if (el === active && !UNFOCUSED.has(el.tagName)) out.push("focused");
  if (((tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") && el.required) || el.getAttribute("aria-required") === "true") out.push("required");
  if ((((tag === "INPUT" && !["checkbox","radio","button","submit","reset","file","range","image"].includes(el.type)) || tag === "TEXTAREA") && el.readOnly)
      || el.getAttribute("aria-readonly") === "true" || unwritable(el, r)) out.push("readonly");
  if (hidden) out.push("hidden");
  return out;
}

function refFor(node, start) {
  let ref = refOf.get(node);
  if (ref === undefined) {
    ref = "e" + (start.n++);
    next = Math.max(next, start.n);
    refOf.set(node, ref);
    byRef.set(ref, new WeakRef(node));
  }
  if (node.nodeType === 1 && node.getAttribute(ATTR) !== ref) node.setAttribute(ATTR, ref);
  return ref;
}

const MOVING = new Set(["transform", "translate", "rotate", "scale", "left", "top", "right",
 "bottom", "inset", "width", "height", "margin", "marginLeft", "marginTop", "offsetDistance"]);
const still = new WeakMap();  // an element's box as it was when something began to move it

function movingTargets() {  // the elements an animation or transition is moving now
  const out = new Set();
  for (const a of document.getAnimations()) {
    const effect = a.effect;
    if (a.playState !== "running" || !effect || !effect.target || effect.pseudoElement) continue;
    if (effect.getKeyframes().some((k) => Object.keys(k).some((p) => MOVING.has(p)))) out.add(effect.target);
  }
  return out;
}

function shownBox(el, moving) {  // one that an animation is moving: where it was as it began
  const kept = moving ? still.get(el) : undefined;
  if (kept !== undefined) return kept && inView(kept);
  const b = box(el);
  still.set(el, b && [b[0] + scrollX, b[1] + scrollY, b[2], b[3]]);
  return b;
}

const inView = (kept) => [Math.round((kept[0] - scrollX) * 10) / 10, Math.round((kept[1] - scrollY) * 10) / 10, kept[2], kept[3]];
const stillText = new WeakMap();  // a moving text node's box as the last snapshot gave it, and that snapshot's number
let snaps = 0;

function textBox(node, moving) {  // one an animation is moving: as the movement's first snapshot gave it (only those are stored: storing every text node's box costs more than measuring it)
  if (!moving) return box(node);
  const kept = stillText.get(node);
  if (kept !== undefined && kept.snap >= snaps - 1) { kept.snap = snaps; return kept.box && inView(kept.box); }
  const b = box(node);
  stillText.set(node, { box: b && [b[0] + scrollX, b[1] + scrollY, b[2], b[3]], snap: snaps });
  return b;
}

let textRange = null;  // during a walk, one Range moved over each text node measured

function box(node) {  // an element's box, or a text node's: the box around its lines
  let b = node.nodeType === 1 ? node.getBoundingClientRect() : null;
  if (b === null || b.width === 0 && b.height === 0 && getComputedStyle(node).display === "contents") {
    textRange = textRange || document.createRange();  // a display: contents element's is its children's
    textRange.selectNodeContents(node);
    b = textRange.getBoundingClientRect();
  }
  if (b.width === 0 && b.height === 0) return null;
  return [Math.round(b.x * 10) / 10, Math.round(b.y * 10) / 10, Math.round(b.width * 10) / 10, Math.round(b.height * 10) / 10];
}

function isModal(el) {
  if (el.getAttribute("aria-modal") === "true") return true;
  try { return el.tagName === "DIALOG" && el.matches(":modal"); } catch (e) { return false; }
}

function isNumber(text) { return text !== null && text.trim() !== "" && Number.isFinite(Number(text)); }

function numericOf(el, r, out) {
  const type = el.tagName === "INPUT" ? (el.type || "").toLowerCase() : "";
  let now = null, min = null, max = null, step = null;
  if (type === "range" || type === "number") {
    now = el.value;
    min = el.min !== "" ? el.min : type === "range" ? "0" : null;
    max = el.max !== "" ? el.max : type === "range" ? "100" : null;
    step = el.step === "" ? "1" : el.step;
    if (!el.disabled && !el.readOnly) out.valuesettable = "true";
  } else if (el.tagName === "PROGRESS") {
    if (el.position !== -1) now = String(el.value);
    min = "0"; max = String(el.max);
  } else if (el.tagName === "METER") {
    now = String(el.value); min = String(el.min); max = String(el.max);
  } else if (VALUED.has(r)) {
    now = el.getAttribute("aria-valuenow");
    min = el.getAttribute("aria-valuemin");
    max = el.getAttribute("aria-valuemax");
  } else return;
  for (const [key, v] of [["valuenow", now], ["valuemin", min], ["valuemax", max], ["valuestep", step]])
    if (isNumber(v)) out[key] = v.trim();
  const text = el.getAttribute("aria-valuetext"); if (text !== null) out.valuetext = text;
}

function focusable(el) {  // whether el.focus() takes: the browser's tab index, but for a link with no href, a disabled or inert element, and what takes focus with no tab index of its own; a frame passes it to its document, where it is on no element
  if (UNFOCUSED.has(el.tagName)) return false;
  if (el.matches(":disabled") || inertShown !== false && el.closest("[inert]")) return false;
  if (/^\s*[-+]?[0-9]/.test(el.getAttribute("tabindex") || "")) return true;
  if (el.tagName === "A" || el.tagName === "AREA") return el.hasAttribute("href");
  return el.tabIndex >= 0 || editingHost(el) || el.tagName === "DIALOG" || !!(el.shadowRoot && el.shadowRoot.delegatesFocus);
}

function selectable(el, r) {  // a row's or cell's: ARIA gives it a selection, a static table's has none
  if (el.hasAttribute("aria-selected")) return true;
  return (r === "row" || r === "gridcell") && el.closest('[role="grid"], [role="treegrid"]') !== null;
}

function nativeOf(el, testids, r, framed) {  // framed: el's document is a frame shown inside the snapshot's
  const out = { tag: el.tagName.toLowerCase(), focusable: String(focusable(el)) };
  if (CELLS.has(r)) out.selectable = String(selectable(el, r));
  const invalid = el.getAttribute("aria-invalid");
  if (invalid !== null && invalid !== "" && invalid !== "false" || userInvalid(el)) out.invalid = "true";
  if (el.getAttribute("aria-busy") === "true") out.busy = "true";
  if (el.getAttribute("aria-pressed") === "true") out.pressed = "true";
  if (CHECKABLE.has(r) && ((el.tagName === "INPUT" && el.indeterminate) || el.getAttribute("aria-checked") === "mixed")) out.checked = "mixed";
  if (isModal(el)) out.modal = "true";
  if (el.tagName === "DIALOG" && typeof el.closedBy === "string") out.closedby = el.closedBy;  // what closes it as it is shown: any, closerequest (Escape does) or none
  const live = el.getAttribute("aria-live");
  if (live === "polite" || live === "assertive" || live === "off") out.live = live;
  else if (live === null && IMPLICIT_LIVE[r]) out.live = IMPLICIT_LIVE[r];
  const atomic = el.getAttribute("aria-atomic");
  if (atomic === "true" || atomic === null && (r === "alert" || r === "status")) out.atomic = "true";
  const multiline = el.getAttribute("aria-multiline");
  if (el.tagName === "TEXTAREA" || multiline === "true" || editingHost(el) && multiline !== "false") out.multiline = "true";
  if (r === "combobox" && (el.tagName === "INPUT" && TYPED.has(el.type) || editingHost(el))) out.editable = "true";
  if (el.tagName === "BODY") { out.url = location.href; if (scrollX || scrollY) out.scroll = scrollX + " " + scrollY; }
  for (const a of testids) { const v = el.getAttribute(a); if (v !== null) out[a] = v; }
  const id = el.id; if (id && el.getRootNode() === document && !framed) out.id = id;  // a shadow root's ids are its own, and a frame's
  const nm = el.getAttribute("name"); if (nm !== null) out.name = nm;
  if ((el.tagName === "A" || el.tagName === "AREA") && el.hasAttribute("href")) { out.href = el.getAttribute("href"); out.url = el.href; }
  if (el.tagName === "INPUT") out.type = (el.type || "text");
  if (secret.has(el)) out.password = "true";
  numericOf(el, r, out);
  if (el.tagName === "OPTION") { out.value = el.value; if (el.closest("select")?.multiple) out.multiple = "true"; }
  if (el.tagName === "SELECT" && el.multiple || el.getAttribute("aria-multiselectable") === "true") out.multiselectable = "true";
  if (/^H[1-6]$/.test(el.tagName)) out.level = el.tagName.slice(1);
  for (const [attr, key] of COLLECTION) {
    const v = el.getAttribute(attr);
    if (v !== null && /^-?[0-9]{1,9}$/.test(v.trim())) out[key] = v.trim();
  }
  const lv = el.getAttribute("aria-level"); if (lv !== null && /^[1-9][0-9]{0,2}$/.test(lv.trim())) out.level = lv.trim();
  if (el.tagName === "IFRAME") out.frame = el.getAttribute("name") || el.getAttribute("src") || "";
  return out;
}

const RELATIONS = [
  ["aria-labelledby", "labelled_by"], ["aria-describedby", "described_by"], ["aria-controls", "controls"],
  ["aria-errormessage", "error_message"], ["aria-activedescendant", "active_descendant"],
];
const RELATED = RELATIONS.map(([attr]) => "[" + attr + "]").join(",");

function idsOf(el, attr) {
  const v = el.getAttribute(attr);
  return v ? v.trim().split(/\s+/) : [];
}

function relationSources(root) {
  const sources = new Set(root.querySelectorAll(RELATED));
  const ids = new Set();
  for (const el of sources) for (const [attr] of RELATIONS) for (const id of idsOf(el, attr)) ids.add(id);
  return { sources, ids };
}

function relationTargets(el) {
  const out = [];
  const root = el.getRootNode();
  for (const [attr, relation] of RELATIONS) {
    const targets = idsOf(el, attr).map((id) => root.getElementById(id)).filter((t) => t);
    if (targets.length) out.push([relation, targets]);
  }
  return out;
}

function interesting(el, testids, referenced) {
  if (el.id && referenced.has(el.id)) return true;
  if (el.hasAttribute("role") || el.hasAttribute("tabindex") || el.isContentEditable && el.getAttribute("contenteditable") !== null
      || el.hasAttribute("aria-label") || el.hasAttribute("aria-live") || el.hasAttribute("onclick") || el.tagName === "IFRAME" || el.tagName === "CANVAS") return true;
  for (const a of testids) if (el.hasAttribute(a)) return true;
  return false;
}

function snap(opts) {
  const counter = counterFrom(opts.start);
  const rows = [];
  const max = opts.maxNodes || Infinity;
  const interactiveOnly = !!opts.interactiveOnly;
  const testids = opts.testids;
  const active = activeEl();
  let rootEl = document.body || document.documentElement;
  if (opts.root) {
    const w = byRef.get(opts.root);
    rootEl = w && w.deref();
    if (!rootEl || !rootEl.isConnected) return JSON.stringify({ next: counter.n, error: "unknown" });
    if (rootEl.nodeType !== 1) rootEl = rootEl.parentElement;
  }
  const relating = relationSources(rootEl.getRootNode());
  const related = [];
  const moved = movingTargets();
  inertShown = document.querySelector("[inert]") !== null;
  let stop = false;
  snaps++;
  function push(node, r, nm, val, desc, st, bx, depth, nat) {
    if (rows.length >= max) { stop = true; return null; }
    const ref = refFor(node, counter);
    rows.push([ref, r, nm, val, desc, st, bx, depth, nat]);
    return ref;
  }
  function walk(el, depth, ariaHidden, subsumed, isRoot, moving) {
    if (stop || SKIP.has(el.tagName)) return;
    moving = moving || moved.has(el);
    let r = role(el);
    if (r === null) return;
    if (isRoot) r = el.tagName === "BODY" ? "document" : r;
    const hiddenHere = ariaHidden || el.getAttribute("aria-hidden") === "true";
    let include = isRoot || (r !== "generic" || interesting(el, testids, relating.ids));
    if (include && interactiveOnly && !isRoot && !INTERACTIVE.has(r) && !el.hasAttribute("tabindex")) include = false;
    let childDepth = depth;
    let childSubsumed = subsumed;
    if (include) {
      const hidden = hiddenHere || isHidden(el);
      const nm = name(el, r);
      const val = value(el, r);
      let desc = idsText(el, "aria-describedby") || (userInvalid(el) ? el.validationMessage : "");
      if (!desc && el.hasAttribute("title") && norm(el.getAttribute("title")) !== nm) desc = norm(el.getAttribute("title"));
      const nat = nativeOf(el, testids, r, !!opts.framed);
      const ref = push(el, r, nm, val, desc, states(el, r, hidden, active), hidden ? null : shownBox(el, moving), depth, nat);
      if (ref === null) return;
      if (relating.sources.has(el)) related.push([nat, relationTargets(el)]);
      childDepth = depth + 1;
      if (FROM_CONTENT.has(r)) childSubsumed = true;
      if (el.tagName === "TEXTAREA" || el.tagName === "IFRAME" || r === "textbox" && editingHost(el)) return;
    }
    const kids = childrenOf(el);
    for (const kid of kids) {
      if (stop) return;
      if (kid.nodeType === 1) walk(kid, childDepth, hiddenHere, childSubsumed, false, moving);
      else if (kid.nodeType === 3 && !childSubsumed && !interactiveOnly) {
        const t = norm(kid.data);
        if (!t) continue;
        const hidden = hiddenHere || isHidden(el);
        push(kid, "text", t, "", "", hidden ? ["hidden"] : [], hidden ? null : textBox(kid, moving), childDepth, {});
      }
    }
  }
  try { walk(rootEl, 0, false, false, true, false); } finally { inertShown = null; textRange = null; }
  // A relation names the nodes of this snapshot it points at, once every one has its ref.
  const included = new Set(rows.map((row) => row[0]));
  for (const [nat, targets] of related) {
    for (const [relation, els] of targets) {
      const refs = els.map((t) => refOf.get(t)).filter((ref) => ref !== undefined && included.has(ref));
      if (refs.length) nat["rel:" + relation] = refs.join(" ");
    }
  }
  // JSON text: Playwright's structured serializer is many times slower on big results.
  return JSON.stringify({ next: counter.n, rows });
}

function resolve(ref) {
  const w = byRef.get(ref);
  const node = w && w.deref();
  if (!node) return { status: "unknown" };
  if (!node.isConnected) return { status: "detached" };
  let el = node;
  if (node.nodeType !== 1) {
    el = node.parentElement;
    let r = el.getAttribute(ATTR);
    if (!r) { r = "t" + ref; el.setAttribute(ATTR, r); }
    return { status: "ok", stamp: r };
  }
  if (el.getAttribute(ATTR) !== ref) el.setAttribute(ATTR, ref);
  for (const other of el.getRootNode().querySelectorAll("[" + ATTR + '="' + ref + '"]')) {
    if (other !== el) other.removeAttribute(ATTR);
  }
  return { status: "ok", stamp: ref };
}

function elementOf(ref) {
  const w = byRef.get(ref);
  let node = w && w.deref();
  if (!node || !node.isConnected) return null;
  return node.nodeType === 1 ? node : node.parentElement;
}

function describe(opts) {
  const el = elementOf(opts.ref);
  if (!el) return null;
  const r = role(el) || "generic";
  const hidden = isHidden(el);
  const path = [];
  let cur = el.parentElement;
  while (cur && cur !== document.documentElement) {
    const cr = cur.tagName === "BODY" ? "document" : role(cur);
    if (cr && (cr !== "generic" || cur.tagName === "BODY")) {
      let index = 0;
      if (cur.parentElement) {
        for (const sib of cur.parentElement.children) { if (sib === cur) break; if (role(sib) === cr) index++; }
      }
      path.unshift([cr, name(cur, cr), index]);
    }
    cur = cur.parentElement;
  }
  let index = 0;
  if (el.parentElement) for (const sib of el.parentElement.children) { if (sib === el) break; if (role(sib) === r) index++; }
  path.push([r, name(el, r), index]);
  return {
    role: r, name: name(el, r), value: value(el, r),
    description: idsText(el, "aria-describedby") || norm(el.getAttribute("title")),
    text: norm(el.innerText !== undefined ? el.innerText : el.textContent),
    placeholder: el.getAttribute("placeholder") || "",
    states: states(el, r, hidden, activeEl()), box: hidden ? null : box(el),
    native: nativeOf(el, opts.testids, r), path,
  };
}

function fieldValue(el) {  // what read and check take as an element's value: an editable element's text, as its node's value shows it, else a control's value, else its aria-valuenow
  if (editingHost(el)) return editedText(el);
  return ("value" in el && el.tagName !== "BUTTON" && el.tagName !== "LI") ? String(el.value) : (el.getAttribute("aria-valuenow") || "");
}

function info(ref) {
  const el = elementOf(ref);
  if (!el) {
    const w = byRef.get(ref);
    return w ? { status: "detached" } : { status: "unknown" };
  }
  const r = role(el) || "generic";
  const hidden = isHidden(el);
  const b = el.getBoundingClientRect();
  return {
    status: "ok", role: r, visible: !hidden && (b.width > 0 || b.height > 0),
    states: states(el, r, hidden, activeEl()),
    text: norm(el.innerText !== undefined ? el.innerText : el.textContent),
    value: fieldValue(el),
    checkable: CHECKABLE.has(r),
  };
}

function assign(els, start) {
  const counter = counterFrom(start);
  const refs = els.map((el) => refFor(el, counter));
  return { next: counter.n, refs };
}

function point(x, y, start) {
  const el = document.elementFromPoint(x, y);
  if (!el) return { next: start, refs: [] };
  return assign([el], start);
}

function findRole(o) {
  const out = [];
  const want = o.name === null || o.name === undefined ? null : (o.exact ? norm(o.name) : norm(o.name).toLowerCase());
  for (const el of document.querySelectorAll("*")) {
    if (SKIP.has(el.tagName) || el.tagName === "HTML") continue;
    const r = el.tagName === "BODY" ? "document" : role(el);
    if (r !== o.role) continue;
    if (el.closest('[aria-hidden="true"]') || isHidden(el)) continue;
    if (want !== null) {
      const n = name(el, r);
      if (o.exact ? n !== want : !n.toLowerCase().includes(want)) continue;
    }
    out.push(el);
  }
  return assign(out, o.start);
}

const lib = { snap, findRole, resolve, describe, info, fieldValue, assign, point, elementOf, attr: ATTR };
Object.defineProperty(window, "__semledger", { value: lib, enumerable: false });
return lib;
})()
"""

MISSING: Final = "__semledger_missing__"
"""What a `Script`'s short form answers in a document the library is not installed in."""


@attrs.frozen
class Script:
    """One call into the library, in two forms: `short` calls an installed library and
    answers `MISSING` otherwise; `full` carries the whole library (about 18 KB) and
    installs it first. `evaluate_script` sends the short form, then the full one if needed,
    so the library crosses the wire once per document, not once per call."""

    short: str
    full: str


def _script(params: str, call: str) -> Script:
    short = f"({params}) => {{\n  const lib = window.__semledger;\n  return lib ? {call} : {MISSING!r};\n}}"
    full = f"({params}) => {{\n  const lib = {LIBRARY.strip()};\n  return {call};\n}}"
    return Script(short, full)


async def evaluate_script(
    evaluate: Callable[[str, Any], Awaitable[Any]], script: Script, arg: Any
) -> Any:
    """``evaluate(script, arg)`` (a frame's ``evaluate`` or a locator's ``evaluate_all``)."""
    result = await evaluate(script.short, arg)
    if isinstance(result, str) and result == MISSING:
        result = await evaluate(script.full, arg)
    return result


CALL: Final = _script("[op, arg]", "lib[op](arg)")
"""Evaluate with ``[op, arg]``: ``lib[op](arg)``."""

ASSIGN: Final = _script("els, start", "lib.assign(els, start)")
"""``Locator.evaluate_all`` with the start number: refs for every matched element."""

FIND_ROLE: Final = _script("o", "lib.findRole(o)")
"""Every visible element with the candidate's role (and name, substring unless exact)."""

POINT: Final = _script("[x, y, start]", "lib.point(x, y, start)")
"""The elements at a viewport point, given ``[x, y, start]``."""

READ_VALUE: Final = _script(
    "el",
    "el.tagName === 'SELECT' && el.multiple"
    " ? Array.from(el.selectedOptions).map((o) => o.value).join(',') : lib.fieldValue(el)",
)
"""``Locator.evaluate``: the value ``read`` answers for the element, a multi-select's chosen
values joined by commas."""
