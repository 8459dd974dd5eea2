import { useEffect, type ReactNode } from 'react';

/** The page's h1, which also names the browser tab. */
export function PageHeading({ title, children }: { title: string; children?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Runline console`;
  }, [title]);
  return (
    <div className="page-heading">
      <h1>{title}</h1>
      {children}
    </div>
  );
}
