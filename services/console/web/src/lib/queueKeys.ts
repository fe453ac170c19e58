import { useEffect, useRef } from "react";

// Keyboard work in an annotation queue: j / k move to the next / previous scenario,
// number keys pick a value for the form's first field, ctrl+enter (or cmd+enter)
// submits. Plain keys are ignored while the user types in a field; ctrl+enter works
// everywhere.

export type KeyAction = { type: "next" } | { type: "prev" } | { type: "submit" } | { type: "pick"; n: number } | null;

export interface KeyLike {
  key: string;
  ctrlKey?: boolean;
  metaKey?: boolean;
  altKey?: boolean;
  target?: EventTarget | null;
}

function typing(t: EventTarget | null | undefined): boolean {
  if (!t || typeof (t as HTMLElement).tagName !== "string") return false;
  const el = t as HTMLElement;
  const tag = el.tagName.toLowerCase();
  if (tag === "textarea" || tag === "select" || el.isContentEditable) return true;
  if (tag === "input") {
    const type = ((el as HTMLInputElement).type || "text").toLowerCase();
    return !["checkbox", "radio", "button", "submit", "reset", "range"].includes(type);
  }
  return false;
}

export function keyAction(e: KeyLike): KeyAction {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) return { type: "submit" };
  if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return null;
  if (e.key === "j") return { type: "next" };
  if (e.key === "k") return { type: "prev" };
  if (/^[0-9]$/.test(e.key)) return { type: "pick", n: Number(e.key) };
  return null;
}

interface SchemaLike {
  type?: string | string[];
  properties?: Record<string, SchemaLike>;
  required?: string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}

function fieldType(f: SchemaLike): string | undefined {
  return Array.isArray(f.type) ? f.type.find((t) => t !== "null") : f.type;
}

function pickable(f: SchemaLike): boolean {
  const t = fieldType(f);
  return !!f.enum || t === "boolean" || t === "number" || t === "integer";
}

/** The field number keys set: the first required field that takes a pick (an enum, a
 * boolean or a number), else the first such field. Schemas come back from the registry
 * with their keys sorted, so "first" cannot mean the author's order. */
export function pickField(schema: SchemaLike | undefined): string | undefined {
  const props = schema?.properties;
  if (!props) return undefined;
  const names = Object.keys(props).filter((k) => pickable(props[k]));
  return names.find((k) => schema?.required?.includes(k)) ?? names[0];
}

/** The value number key n gives the pick field: the nth enum value (1-based), true/false
 * for 1/0 on a boolean, n itself on a number within its bounds. Returns the new form
 * data, or null when n means nothing for that field. */
export function applyPick(schema: SchemaLike | undefined, data: unknown, n: number): Record<string, unknown> | null {
  const name = pickField(schema);
  if (name === undefined) return null;
  const f = schema!.properties![name];
  const type = fieldType(f);
  const base = data && typeof data === "object" ? { ...(data as Record<string, unknown>) } : {};
  let v: unknown;
  if (f.enum) {
    if (n < 1 || n > f.enum.length) return null;
    v = f.enum[n - 1];
  } else if (type === "boolean") {
    if (n !== 0 && n !== 1) return null;
    v = n === 1;
  } else {
    if ((f.minimum !== undefined && n < f.minimum) || (f.maximum !== undefined && n > f.maximum)) return null;
    v = n;
  }
  base[name] = v;
  return base;
}

export interface QueueKeyHandlers {
  next: () => void;
  prev: () => void;
  submit: () => void;
  pick: (n: number) => void;
}

/** Listens on the document while mounted. */
export function useQueueKeys(h: QueueKeyHandlers): void {
  const ref = useRef(h);
  ref.current = h;
  useEffect(() => {
    const on = (e: KeyboardEvent) => {
      const a = keyAction(e);
      if (!a) return;
      e.preventDefault();
      if (a.type === "pick") ref.current.pick(a.n);
      else ref.current[a.type]();
    };
    document.addEventListener("keydown", on);
    return () => document.removeEventListener("keydown", on);
  }, []);
}
