import { lazy, Suspense } from "react";
import type { SchemaFormProps } from "./SchemaFormImpl";
import { Loading } from "./Loading";

// @rjsf and ajv weigh ~100 KB gzipped: loaded only when a form is shown.
const Impl = lazy(() => import("./SchemaFormImpl"));

export function SchemaForm(props: SchemaFormProps) {
  return (
    <Suspense fallback={<Loading label="Loading form…" />}>
      <Impl {...props} />
    </Suspense>
  );
}
