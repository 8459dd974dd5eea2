import { autocompletion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { StateEffect } from '@codemirror/state';
import { EditorView, basicSetup } from 'codemirror';
import { forwardRef, useEffect, useImperativeHandle, useRef } from 'react';
import { keysAtPath, placeAt, rangeOfPath } from './json-tree.js';
import type { Problem, SchemaIndex } from './definition-schema.js';

/** The problems of the last save (the API's 400), shown at their place while the text is unchanged. */
export interface SavedProblems {
  text: string;
  problems: Problem[];
}

export interface DefinitionEditorHandle {
  /** Moves the cursor to a problem's place and focuses the editor. */
  reveal(problem: Problem): void;
  /** The line a problem is on (1-based), for the list under the editor. */
  lineOf(problem: Problem): number;
}

const TRANSITIONS = new Set(['next', 'else', 'onReject']);

/** Asks the linter to run again: the save's problems changed while the text did not. */
const relint = StateEffect.define<null>();

/** Styles inside the editor's shadow root (the page's style sheet does not reach in). */
const EDITOR_THEME = EditorView.theme({
  '&': { height: '100%', fontSize: '0.85rem', backgroundColor: '#fff', color: '#1f2328' },
  '&.cm-focused': { outline: '3px solid #0a58ca', outlineOffset: '-3px' },
  '.cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace' },
  '.cm-gutters': { backgroundColor: '#f6f8fa', color: '#57606a' },
  '.cm-tooltip-autocomplete ul li[aria-selected]': { backgroundColor: '#0a58ca', color: '#fff' },
});

/** A best-effort parse of what is typed: the last text that parsed, for the completion's context. */
function parsed(text: string, last: { value: unknown }): unknown {
  try {
    last.value = JSON.parse(text);
  } catch {
    // Keep the last document that parsed: a node's type rarely changes while its fields are typed.
  }
  return last.value;
}

function completionSource(schema: SchemaIndex, lastParsed: { value: unknown }) {
  return (context: CompletionContext): CompletionResult | null => {
    const place = placeAt(context.state, context.pos);
    if (!place) return null;
    const document = parsed(context.state.doc.toString(), lastParsed);
    if (place.kind === 'key') {
      const keys = schema.keysAt(document, place.path);
      if (keys.length === 0) return null;
      return {
        from: place.from,
        to: place.to,
        options: keys.map(({ key, detail }) => ({ label: `"${key}"`, apply: `"${key}": `, type: 'property', detail, displayLabel: key })),
        validFor: /^"?[\w-]*"?$/,
      };
    }
    const field = place.path.at(-1) ?? '';
    const graphPath = place.path.slice(0, 1);
    const isTransition = TRANSITIONS.has(field) || (place.path[1] === 'nodes' && place.path[3] === 'cases' && field === 'next') || (place.path.length === 2 && field === 'start');
    const values = isTransition ? keysAtPath(context.state, [...graphPath, 'nodes']) : schema.valuesAt(document, place.path);
    if (values.length === 0 && !(context.explicit && field === 'type')) return null;
    const options = (field === 'type' && place.path[1] === 'nodes' && values.length === 0 ? schema.nodeTypes : values).map((value) => ({
      label: JSON.stringify(value),
      type: isTransition ? 'variable' : 'enum',
      detail: isTransition ? 'node' : undefined,
    }));
    return { from: place.from, to: place.to, options, validFor: /^"?[\w-]*"?$/ };
  };
}

function problemDiagnostics(view: EditorView, problems: Problem[], source: string): Diagnostic[] {
  return problems.map((problem) => ({ ...rangeOfPath(view.state, problem.path, problem.atKey), severity: 'error' as const, message: problem.message, source }));
}

/**
 * The draft in CodeMirror 6: JSON with the definition's schema behind completion (keys of the
 * object at the cursor, node types, node ids for `next`, enum values) and linting (a JSON
 * syntax error, then the schema's structure and transitions to missing nodes, at their line);
 * the problems of the last save (`saved`) show at their place until the text changes.
 */
export const DefinitionEditor = forwardRef<
  DefinitionEditorHandle,
  { initial: string; schema: SchemaIndex; saved: SavedProblems | null; onChange: (text: string) => void; onProblems: (problems: Problem[]) => void; label: string }
>(function DefinitionEditor({ initial, schema, saved, onChange, onProblems, label }, ref) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const current = useRef({ saved, onChange, onProblems });
  current.current = { saved, onChange, onProblems };

  useEffect(() => {
    const lastParsed = { value: undefined as unknown };
    const parseLint = jsonParseLinter();
    const lint = linter(
      (editor) => {
        const syntax = parseLint(editor);
        if (syntax.length > 0) {
          current.current.onProblems([]);
          return syntax.map((diagnostic) => ({ ...diagnostic, message: `Not valid JSON: ${diagnostic.message}` }));
        }
        const text = editor.state.doc.toString();
        const found = schema.check(parsed(text, lastParsed));
        const fromSave = current.current.saved && current.current.saved.text === text ? current.current.saved.problems : [];
        current.current.onProblems([...fromSave, ...found]);
        return [...problemDiagnostics(editor, fromSave, 'the save'), ...problemDiagnostics(editor, found, 'the schema')];
      },
      { delay: 300, needsRefresh: (update) => update.transactions.some((transaction) => transaction.effects.some((effect) => effect.is(relint))) },
    );
    // In a shadow root, CodeMirror's styles go into a constructed style sheet; in the document
    // they would be a <style> element, which the console's Content-Security-Policy refuses.
    const shadow = host.current!.shadowRoot ?? host.current!.attachShadow({ mode: 'open' });
    const frame = globalThis.document.createElement('div');
    frame.style.height = '100%';
    shadow.replaceChildren(frame);
    const editor = new EditorView({
      doc: initial,
      parent: frame,
      root: shadow,
      extensions: [
        EDITOR_THEME,
        basicSetup,
        json(),
        lintGutter(),
        lint,
        autocompletion({ override: [completionSource(schema, lastParsed)], activateOnTyping: true }),
        EditorView.contentAttributes.of({ 'aria-label': label }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) current.current.onChange(update.state.doc.toString());
        }),
      ],
    });
    // The text scrolls inside the editor: its scroller takes focus, so a keyboard can scroll it
    // without editing (axe: scrollable-region-focusable).
    editor.scrollDOM.tabIndex = 0;
    editor.scrollDOM.setAttribute('aria-label', `${label}, scrolling`);
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
    // The editor is made once per page; the text it starts from is `initial` at that moment.
  }, [schema]);

  useEffect(() => {
    view.current?.dispatch({ effects: relint.of(null) });
  }, [saved]);

  useImperativeHandle(ref, () => ({
    reveal(problem) {
      const editor = view.current;
      if (!editor) return;
      const range = rangeOfPath(editor.state, problem.path, problem.atKey);
      editor.dispatch({ selection: { anchor: range.from, head: range.to }, scrollIntoView: true });
      editor.focus();
    },
    lineOf(problem) {
      const editor = view.current;
      return editor ? editor.state.doc.lineAt(rangeOfPath(editor.state, problem.path, problem.atKey).from).number : 0;
    },
  }));

  return <div ref={host} className="definition-editor" />;
});
