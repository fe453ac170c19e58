// Typed calls of the testset pages (testsets and testcases in
// docs/reference/registry.md).
import { json, raw, ApiError } from "./call";
import type { Body, Has, Schemas } from "./schema";

/** Testset is a testset's header (Artifact). */
export type Testset = Has<Schemas["Artifact"], "id" | "slug">;

/** Testcase is a testset's row (Testcase). */
export type Testcase = Has<Schemas["Testcase"], "id" | "data">;

/** TestsetRevision is a testset revision (TestsetRevision), its data read
 * as testcases (TestsetData). */
export type TestsetRevision = Has<Omit<Schemas["TestsetRevision"], "data">, "id" | "slug" | "version" | "testset_id" | "testset_variant_id"> & {
  data?: Omit<Schemas["TestsetData"], "testcases"> & { testcases?: Testcase[] };
};

/** TestsetVariant is a testset's variant (TestsetVariant). */
export type TestsetVariant = Has<Schemas["TestsetVariant"], "id" | "slug" | "testset_id">;

export async function listTestsets(): Promise<Testset[]> {
  const r = await json<{ testsets?: Testset[] }>("POST", "/api/testsets/query", { windowing: { limit: 500 } });
  return r.testsets ?? [];
}

export async function getTestset(id: string): Promise<Testset | undefined> {
  return (await json<{ testset?: Testset }>("GET", `/api/testsets/${id}`)).testset;
}

export async function listVariants(testsetId: string): Promise<TestsetVariant[]> {
  const r = await json<{ testset_variants?: TestsetVariant[] }>("POST", "/api/testsets/variants/query", {
    testset_refs: [{ id: testsetId }],
  });
  return r.testset_variants ?? [];
}

/** history lists a variant's revisions, newest first, without testcases. */
export async function history(variantId: string, depth = 100): Promise<TestsetRevision[]> {
  const r = await json<{ testset_revisions?: TestsetRevision[] }>("POST", "/api/testsets/revisions/log", {
    testset_revisions: { testset_variant_id: variantId, depth },
    include_testcases: false,
  });
  return r.testset_revisions ?? [];
}

/** getRevision reads a revision with its testcases (all of them: the grid
 * is virtualised, the rows are not paged). */
export async function getRevision(id: string): Promise<TestsetRevision | undefined> {
  return (await json<{ testset_revision?: TestsetRevision }>("GET", `/api/testsets/revisions/${id}?include_testcases=true`))
    .testset_revision;
}

/** latestRevision reads the newest revision of the testset's default
 * variant with its testcases. */
export async function latestRevision(testsetId: string): Promise<TestsetRevision | undefined> {
  const r = await json<{ testset_revision?: TestsetRevision }>("POST", "/api/testsets/revisions/retrieve", {
    testset_ref: { id: testsetId },
    include_testcases: true,
  });
  return r.testset_revision;
}

/** Delta is a commit's edits (the document types a commit's delta as any
 * object; services/registry/internal/testcases/delta.go reads this). */
export type Delta = {
  rows?: { add?: { data: Record<string, unknown> }[]; remove?: string[]; replace?: { id: string; data: Record<string, unknown> }[] };
  columns?: { add?: string[]; remove?: string[]; replace?: [string, string][] };
};

/** commitDelta commits edits on top of base: the revision is base with delta
 * applied (services/registry/internal/testcases/delta.go). */
export async function commitDelta(base: TestsetRevision, delta: Delta, message: string): Promise<TestsetRevision> {
  // include_testcases is read by the commit too (testcaseOpts in
  // services/registry/internal/httpapi/git.go), though the document's
  // commit body does not list it.
  const body: Body<"postTestsetsRevisionsCommit"> & { include_testcases: boolean } = {
    testset_revision: {
      testset_id: base.testset_id,
      testset_variant_id: base.testset_variant_id,
      testset_revision_id: base.id,
      message,
      delta,
    },
    include_testcases: false,
  };
  const r = await json<{ testset_revision?: TestsetRevision }>("POST", "/api/testsets/revisions/commit", body);
  if (!r.testset_revision) throw new ApiError(409, "The commit made no revision (the base revision is gone).", r);
  return r.testset_revision;
}

export type FileType = "csv" | "json";

export interface UploadResult {
  testset: { id: string; slug: string; name?: string; revision_id?: string; data?: { testcase_ids?: string[] } };
}

/** upload sends a file: a new testset (no testsetId) or a new revision of
 * an existing one. Errors come back as ApiError with the server's message
 * ("line N: …" or "item N: …"). */
export async function upload(file: Blob, fileType: FileType, opts: { testsetId?: string; name?: string }): Promise<UploadResult> {
  const form = new FormData();
  form.set("file", file, (file as File).name ?? `upload.${fileType}`);
  form.set("file_type", fileType);
  if (opts.name) form.set("testset_name", opts.name);
  const path = opts.testsetId ? `/api/simple/testsets/${opts.testsetId}/upload` : "/api/simple/testsets/upload";
  return json<UploadResult>("POST", path, form);
}

/** download fetches a revision as a file and hands it to the browser. */
export async function download(revisionId: string, fileType: FileType, fileName: string): Promise<void> {
  const res = await raw(`/api/testsets/revisions/${revisionId}/download?file_type=${fileType}&file_name=${encodeURIComponent(fileName)}`, {
    method: "POST",
  });
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = fileName.endsWith("." + fileType) ? fileName : `${fileName}.${fileType}`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** latestRevisionHeader is the latest revision without its rows. */
export async function latestRevisionHeader(testsetId: string): Promise<TestsetRevision | undefined> {
  const r = await json<{ testset_revision?: TestsetRevision }>("POST", "/api/testsets/revisions/retrieve", {
    testset_ref: { id: testsetId },
    include_testcases: false,
    include_testcase_ids: false,
  });
  return r.testset_revision;
}
