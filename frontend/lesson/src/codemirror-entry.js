// Entry point bundled into static/vendor/codemirror.js.
// It re-exports only what the lesson page uses, plus a small editor factory so the
// page code does not need to know how CodeMirror's extensions fit together.
import { EditorState, Compartment } from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter,
  drawSelection, highlightSpecialChars,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import {
  indentOnInput, bracketMatching, syntaxHighlighting, HighlightStyle, indentUnit,
} from "@codemirror/language";
import { tags } from "@lezer/highlight";
import { closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
import { python } from "@codemirror/lang-python";
import { javascript } from "@codemirror/lang-javascript";

// The editor's colours, one light theme for every language (Python, JavaScript, TypeScript). Every text
// colour has a contrast of at least 4.5:1 (WCAG 2.1 AA) against every background it can be drawn on:
// the editor, the current line, a selection (focused or not) and a matched bracket; the line numbers
// against the gutter and its current line. CodeMirror's default colours miss this (an f-string's #e40
// on white is 3.84:1). tests/browser/test_keyboard_and_screen_reader.py computes every pair.
export const EDITOR_COLOURS = {
  backgrounds: {
    editor: "#ffffff", activeLine: "#eef5fc", selection: "#d5e2f6", selectionUnfocused: "#e3e6eb",
    matchingBracket: "#d4ecda", nonMatchingBracket: "#f9dede",
  },
  gutter: { background: "#f3f4f6", activeLine: "#e3ecf8", text: "#515a6b" },
  text: {
    plain: "#1d2330", keyword: "#7a1fa2", atom: "#1a3e9c", literal: "#116329", string: "#a31515",
    special: "#8a3a00", definition: "#0033b3", local: "#4b2aa6", type: "#006654", className: "#0b5a6b",
    macro: "#2d4f5c", property: "#0033b3", comment: "#4f545c", invalid: "#b00020", meta: "#404740",
    specialChar: "#b00020",
  },
};

const colour = EDITOR_COLOURS.text;
const highlightStyle = HighlightStyle.define([
  { tag: tags.meta, color: colour.meta },
  { tag: tags.link, textDecoration: "underline" },
  { tag: tags.heading, textDecoration: "underline", fontWeight: "bold" },
  { tag: tags.emphasis, fontStyle: "italic" },
  { tag: tags.strong, fontWeight: "bold" },
  { tag: tags.strikethrough, textDecoration: "line-through" },
  { tag: tags.keyword, color: colour.keyword },
  { tag: [tags.atom, tags.bool, tags.url, tags.contentSeparator, tags.labelName], color: colour.atom },
  { tag: [tags.literal, tags.inserted], color: colour.literal },
  { tag: [tags.string, tags.deleted], color: colour.string },
  { tag: [tags.regexp, tags.escape, tags.special(tags.string)], color: colour.special },
  { tag: tags.definition(tags.variableName), color: colour.definition },
  { tag: tags.local(tags.variableName), color: colour.local },
  { tag: [tags.typeName, tags.namespace], color: colour.type },
  { tag: tags.className, color: colour.className },
  { tag: [tags.special(tags.variableName), tags.macroName], color: colour.macro },
  { tag: tags.definition(tags.propertyName), color: colour.property },
  { tag: tags.comment, color: colour.comment, fontStyle: "italic" },
  { tag: tags.invalid, color: colour.invalid },
]);

const background = EDITOR_COLOURS.backgrounds;
const editorTheme = EditorView.theme({
  "&": { color: colour.plain, backgroundColor: background.editor },
  ".cm-content": { caretColor: colour.plain },
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: colour.plain },
  ".cm-activeLine": { backgroundColor: background.activeLine },
  ".cm-selectionBackground": { background: background.selectionUnfocused },
  "&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground": { background: background.selection },
  "&.cm-focused .cm-matchingBracket": { backgroundColor: background.matchingBracket },
  "&.cm-focused .cm-nonmatchingBracket": { backgroundColor: background.nonMatchingBracket },
  ".cm-specialChar": { color: colour.specialChar },
  ".cm-gutters": { backgroundColor: EDITOR_COLOURS.gutter.background, color: EDITOR_COLOURS.gutter.text },
  ".cm-activeLineGutter": { backgroundColor: EDITOR_COLOURS.gutter.activeLine },
}, { dark: false });

/** Language support for one of "python", "javascript", "typescript". */
export function languageSupport(language) {
  if (language === "python") return python();
  if (language === "typescript") return javascript({ typescript: true });
  return javascript();
}

/**
 * Create an editor in `parent`.
 * options: {doc, language, onChange(text), label}
 * Tab indents; Escape then Tab leaves the editor (CodeMirror's documented escape hatch),
 * so keyboard users are never trapped.
 */
export function createEditor(parent, options) {
  const languageSlot = new Compartment();
  const onChange = options.onChange || (() => {});
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.doc || "",
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        indentOnInput(),
        indentUnit.of("    "),
        bracketMatching(),
        closeBrackets(),
        highlightActiveLine(),
        syntaxHighlighting(highlightStyle),
        editorTheme,
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
        languageSlot.of(languageSupport(options.language || "python")),
        EditorView.contentAttributes.of({ "aria-label": options.label || "Code editor" }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    /** Replace the whole text (fires onChange). */
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    setLanguage(language) {
      view.dispatch({ effects: languageSlot.reconfigure(languageSupport(language)) });
    },
    focus: () => view.focus(),
  };
}

export { EditorState, EditorView };
