import { createRequire } from "node:module";
import type protobuf from "protobufjs";
import { readPyString } from "../browsergym.ts";

/**
 * Serialized AndroidAccessibilityForest bytes (the value AndroidControl's TFRecords hold for each
 * screenshot's accessibility tree), given as base64 or as a Python `b'…'` literal, decoded with
 * protobufjs and the android_env a11y protos below into a plain object with the protos' own
 * snake_case field names (`windows`, `tree`, `nodes`, `child_ids`, …), as proto JSON and protobuf
 * text format read in ../android-control.ts give them. Fields the protos do not declare, and
 * declared fields sent with another wire type, are skipped (protobuf's rule for unknown fields).
 */

/** A problem with one accessibility tree (the episode is quarantined naming it). */
export class ForestError extends Error {}

/*
 * The protos below are copied from google-deepmind/android_env (https://github.com/google-deepmind/android_env),
 * android_env/proto/a11y/{rect,android_accessibility_action,android_accessibility_node_info_clickable_span,
 * android_accessibility_node_info,android_accessibility_tree,android_accessibility_window_info,
 * android_accessibility_forest}.proto at commit 53617fa588c2610e3936da8dbca41c1ba406c013, joined into
 * one file (their `import` lines and `option java_*` lines left out; messages and comments as written).
 *
 * Copyright 2024 DeepMind Technologies Limited.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
 * in compliance with the License. You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the License
 * is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express
 * or implied. See the License for the specific language governing permissions and limitations under
 * the License.
 */
const A11Y_PROTO = `
syntax = "proto3";

package android_env;

// Proto representation of Android Rect.
// https://developer.android.com/reference/android/graphics/Rect
// Next index: 5
message ProtoRect {
  int32 left = 1;
  int32 top = 2;
  int32 right = 3;
  int32 bottom = 4;
}

// An Android Accessibility Action.
// Next index: 3
message AndroidAccessibilityAction {
  // Required ID that uniquely identifies the action for this node.
  // Can be one of the standard action IDs listed in the documentation.
  // https://developer.android.com/reference/android/view/accessibility/AccessibilityNodeInfo.AccessibilityAction
  int32 id = 1;

  // Optional label describing what the action is.
  string label = 2;
}

// A single clickable span found in the accessibility node's text.
// Next index: 6
message AndroidAccessibilityNodeInfoClickableSpan {
  // The source of the span (so the client can find the correct spannable string
  // in the node).
  // Next index: 3
  enum SpanSource {
    UNKNOWN_TYPE = 0;         // Catch all type for forward compatibility.
    TEXT = 1;                 // The span is from node#getText
    CONTENT_DESCRIPTION = 2;  // The span is from node#getContentDescription.
  }

  // The text of the span (a substring of the spannable string).
  string text = 1;

  // The URL attached to the span if specified.
  string url = 2;

  // The source of the span.
  SpanSource source = 3;

  // The index of the first character of the span in the spannable string.
  // The end of the span would be a sum of span_start and text.length().
  int32 start = 4;

  // The unique_id from the corresponding AndroidAccessibilityNodeInfo.
  int32 node_id = 5;
}

// An Android AccessibilityNodeInfo.
// Next index: 32
message AndroidAccessibilityNodeInfo {
  // Unique monotonically-increasing ID.
  int32 unique_id = 1;

  // The bounds of this node within the device's screen.
  ProtoRect bounds_in_screen = 2;

  // The name of the View class that created this node.
  string class_name = 3;

  // The content description of the node.
  string content_description = 4;

  // The hint text of the node.
  string hint_text = 5;

  // The name of the package this node comes from.
  string package_name = 6;

  // The text of this node.
  string text = 7;

  // The start index of the text selection.
  int64 text_selection_start = 8;

  // The end index of the text selection.
  int64 text_selection_end = 9;

  // The view ID resource name of the node.
  string view_id_resource_name = 10;

  // The ID of the window this node belongs to.
  int32 window_id = 11;

  // If true, this node can be checked.
  bool is_checkable = 12;

  // If true, this node is currently checked.
  bool is_checked = 13;

  // If true, this node (probably) responds to being clicked.
  bool is_clickable = 14;

  // If true, this node's text can be edited by the user.
  bool is_editable = 15;

  // If true, this node is enabled (e.g., if it is a button).
  bool is_enabled = 16;

  // If true, this node can be focused (e.g., a text input).
  bool is_focusable = 17;

  // If true, this node is currently focused.
  bool is_focused = 18;

  // If true, this node (probably) responds to being long pressed.
  bool is_long_clickable = 19;

  // If true, this node is a password input.
  bool is_password = 20;

  // If true, this node can be scrolled.
  bool is_scrollable = 21;

  // If true, this node is currently selected.
  bool is_selected = 22;

  // If true, this node is (probably) visible to the user.
  bool is_visible_to_user = 23;

  // List of actions that can be performed on this node.
  repeated AndroidAccessibilityAction actions = 24;

  // Ordered list of child IDs (i.e., unique_id).
  repeated int32 child_ids = 25 [packed = true];

  // List of clickable spans present in the node's text or content description.
  repeated AndroidAccessibilityNodeInfoClickableSpan clickable_spans = 26;

  // The depth of this node in the accessibility tree.
  int32 depth = 27;

  // Unique ID of the node that this node is declaring itself to be labeled by.
  int32 labeled_by_id = 28;

  // Unique ID of the node that this is node is declaring itself to be a label
  // for.
  int32 label_for_id = 29;

  // The drawing order for the node.
  int32 drawing_order = 30;

  // The tooltip text of the node.
  string tooltip_text = 31;
}

// A tree (actually a graph) of Android accessibility nodes.
// Next index: 3
message AndroidAccessibilityTree {
  // All of the nodes in the graph. The root node is the node whose ID is 0.
  repeated AndroidAccessibilityNodeInfo nodes = 1;
}

// An Android AccessibilityWindowInfo.
// Next index: 12
message AndroidAccessibilityWindowInfo {
  // Type of the window.
  // Next index: 6
  enum WindowType {
    // The window type is an unknown value.
    UNKNOWN_TYPE = 0;

    // A standard application window.
    TYPE_APPLICATION = 1;

    // An IME window (e.g. GBoard).
    TYPE_INPUT_METHOD = 2;

    // A system window (e.g., a notification).
    TYPE_SYSTEM = 3;

    // An accessibility overlay.
    TYPE_ACCESSIBILITY_OVERLAY = 4;

    // A system window used to divide the screen in split-screen mode. This type
    // of window is present only in split-screen mode.
    TYPE_SPLIT_SCREEN_DIVIDER = 5;
  }

  // Bounds of this window in the device's screen.
  ProtoRect bounds_in_screen = 1;

  // A unique ID identifying the display in which this window is shown.
  int32 display_id = 2;

  // Unique ID as defined by the Android platform.
  int32 id = 3;

  // Z-index of the window. Windows with a greater z-index appear in front of
  // those with a lesser z-index.
  int32 layer = 4;

  // The title of the window, if set.
  string title = 5;

  // The type of the window.
  WindowType window_type = 6;

  // If true, the window is currently accessibility-focused.
  bool is_accessibility_focused = 7;

  // If true, the window is currently active.
  bool is_active = 8;

  // If true, the window is currently focused.
  bool is_focused = 9;

  // If true, the window is in Picture in Picture mode.
  bool is_in_picture_in_picture_mode = 10;

  // The associated accessibility tree for this window.
  AndroidAccessibilityTree tree = 11;
}

// A forest of Android accessibility trees. Each tree belongs to a single
// window. Next index: 2
message AndroidAccessibilityForest {
  // All of the windows present on screen.
  repeated AndroidAccessibilityWindowInfo windows = 1;
}
`;

let forestType: protobuf.Type | undefined;
let protobufjs: typeof protobuf | undefined;

/**
 * protobufjs, loaded by the first forest decoded (synchronously, by require): the reader registry
 * imports this module in every stage process, and almost none of them decode a forest.
 */
function lib(): typeof protobuf {
  protobufjs ??= createRequire(import.meta.url)("protobufjs") as typeof protobuf;
  return protobufjs;
}

/**
 * The AndroidAccessibilityForest message type, parsed from the text above on first use (no file is
 * read at run time). `keepCase` keeps the protos' snake_case field names.
 */
export function androidAccessibilityForest(): protobuf.Type {
  forestType ??= lib().parse(A11Y_PROTO, { keepCase: true }).root.lookupType("android_env.AndroidAccessibilityForest");
  return forestType;
}

/**
 * A reader that follows where it is: the length-delimited fields it is inside (number, repeat
 * index, end) and the field whose key it read last. Used only to name the field a failed decode
 * stopped in, by decoding the same bytes again with it.
 */
function defineTracingReader() {
  class TracingReader extends lib().Reader {
    open: { field: number; index: number; end: number; seen: Map<number, number> }[] = [];
    seen = new Map<number, number>();
    /** The field whose key was read last and whose value is being read; undefined while reading a key. */
    current: { field: number; index: number; wire: number } | undefined;
    override tag(): number {
      while (this.open.length > 0 && this.pos >= (this.open.at(-1)?.end as number))
        this.seen = (this.open.pop() as { seen: Map<number, number> }).seen;
      this.current = undefined;
      const key = super.tag();
      const index = this.seen.get(key >>> 3) ?? 0;
      this.seen.set(key >>> 3, index + 1);
      this.current = { field: key >>> 3, index, wire: key & 7 };
      return key;
    }
    override size(): number {
      const length = super.size();
      if (this.current?.wire === 2) {
        this.open.push({ ...this.current, end: this.pos + length, seen: this.seen });
        this.seen = new Map();
        this.current = undefined;
      }
      return length;
    }
    /** The fields it is in, as the names of a path (`windows.0.tree.nodes.3.text`), read from the message types. */
    path(type: protobuf.Type): string[] {
      const parts: string[] = [];
      let at: protobuf.Type | undefined = type;
      for (const { field: number, index } of [...this.open, ...(this.current ? [this.current] : [])]) {
        const field: protobuf.Field | undefined = at?.fieldsById[number];
        at = field?.resolvedType instanceof lib().Type ? field.resolvedType : undefined;
        parts.push(field === undefined ? `field ${number}` : field.repeated && at ? `${field.name}.${index}` : field.name);
      }
      return parts;
    }
  }
  return TracingReader;
}
let tracingReader: ReturnType<typeof defineTracingReader> | undefined;

/** protobufjs's decode errors, in words; `path` names the field where it stopped. */
function problem(message: string, path: string[]): string {
  const subject = path.length === 0 ? "the forest" : path.join(".");
  const within = path.length === 0 ? "" : ` in ${subject}`;
  if (message.startsWith("index out of range")) return `${subject} runs past the end`;
  if (message === "invalid varint encoding") return `${subject} holds a number longer than 10 bytes`;
  if (message === "invalid tag encoding") return `a field key out of range${within}`;
  if (message === "invalid length encoding") return `${subject} has a length out of range`;
  // The key just read (field 0) is not a field: name the message it is in.
  if (message.startsWith("illegal tag: field number 0"))
    return `a field key with field number 0${path.length > 1 ? ` in ${path.slice(0, -1).join(".")}` : ""}`;
  const wire = /^invalid wire type (\d+)/.exec(message);
  if (wire) return `${subject} has wire type ${wire[1]}`;
  if (message === "invalid end group tag" || message === "missing end group") return `${subject}: a group not closed by its own end tag`;
  if (message === "max depth exceeded") return `${subject}: groups nested deeper than ${lib().Reader.recursionLimit} levels`;
  if (/encoded data was not valid|invalid.*utf-?8/i.test(message)) return `${subject} is not UTF-8 text`;
  return `${subject}: ${message}`;
}

const PNG = [0x89, 0x50, 0x4e, 0x47];

/** Decodes a serialized AndroidAccessibilityForest into a plain object (proto3: unset fields left out). */
export function decodeForest(bytes: Uint8Array): Record<string, unknown> {
  if (PNG.every((b, i) => bytes[i] === b)) throw new ForestError("a PNG image (a screenshot), not an accessibility tree");
  const type = androidAccessibilityForest();
  let message: protobuf.Message;
  try {
    message = type.decode(bytes);
  } catch (err) {
    // Decoded again, following the fields, to say where it fails.
    tracingReader ??= defineTracingReader();
    const tracing = new tracingReader(bytes);
    let reason = (err as Error).message;
    try {
      type.decode(tracing);
    } catch (again) {
      reason = (again as Error).message;
    }
    const where = problem(reason, tracing.path(type));
    throw new ForestError(`not a serialized AndroidAccessibilityForest: ${where} at byte ${Math.min(tracing.pos, bytes.length)}`);
  }
  return type.toObject(message, { longs: Number });
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The serialized bytes a tree string holds (base64, or a Python `b'…'` literal), else undefined. */
export function serializedBytes(text: string): Uint8Array | undefined {
  if (/^b(['"])/.test(text)) {
    let literal: string;
    try {
      const read = readPyString(text, 1);
      if (read.end !== text.length) return undefined;
      literal = read.value;
    } catch {
      return undefined;
    }
    if ([...literal].some((c) => (c.codePointAt(0) as number) > 0xff)) return undefined;
    return Uint8Array.from(literal, (c) => c.charCodeAt(0));
  }
  const compact = text.replace(/\s+/g, "");
  if (compact.length < 4 || !BASE64.test(compact)) return undefined;
  return Uint8Array.from(Buffer.from(compact, "base64"));
}
