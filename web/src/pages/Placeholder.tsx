import type { ComponentType } from 'preact';

/** A page another part of the console will fill in; replaced in web/src/pages/routes.ts. */
export function placeholder(title: string): ComponentType {
  return function Placeholder() {
    return (
      <section aria-labelledby="page-title">
        <h1 id="page-title">{title}</h1>
        <p class="muted">This page is not built yet.</p>
      </section>
    );
  };
}
