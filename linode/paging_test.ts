import assert from "node:assert/strict";
import type { ResourcePage } from "@linode/api-v4";
import { collectPages, PagingError } from "./paging.ts";

/** Serves `total` numbered items in pages of `size`; `tweak` may alter a page before it is returned. */
function pager(total: number, size: number, tweak?: (p: ResourcePage<number>) => ResourcePage<number>) {
  const asked: number[] = [];
  const fetchPage = (page: number): Promise<ResourcePage<number>> => {
    asked.push(page);
    const data = Array.from({ length: total }, (_, i) => i).slice((page - 1) * size, page * size);
    const p = { data, page, pages: Math.max(1, Math.ceil(total / size)), results: total };
    return Promise.resolve(tweak ? tweak(p) : p);
  };
  return { asked, fetchPage };
}

Deno.test("collectPages() walks every page in order and stops at the last", async () => {
  const { asked, fetchPage } = pager(1234, 500);
  const items = await collectPages(fetchPage);
  assert.equal(items.length, 1234);
  assert.equal(items[1233], 1233);
  assert.deepEqual(asked, [1, 2, 3]);
});

Deno.test("collectPages() makes one call for an empty list", async () => {
  const { asked, fetchPage } = pager(0, 500);
  assert.deepEqual(await collectPages(fetchPage), []);
  assert.deepEqual(asked, [1]);
});

Deno.test("collectPages() follows a server that caps the page size", async () => {
  const { asked, fetchPage } = pager(250, 100);
  assert.equal((await collectPages(fetchPage)).length, 250);
  assert.deepEqual(asked, [1, 2, 3]);
});

const BROKEN: Array<{ name: string; tweak: (p: ResourcePage<number>) => ResourcePage<number> }> = [
  { name: "a short middle page", tweak: (p) => p.page === 2 ? { ...p, data: p.data.slice(1) } : p },
  { name: "a short last page", tweak: (p) => p.page === 3 ? { ...p, data: p.data.slice(1) } : p },
  { name: "pages changing mid-walk", tweak: (p) => p.page === 2 ? { ...p, pages: 2 } : p },
  { name: "results changing mid-walk", tweak: (p) => p.page === 3 ? { ...p, results: 1233 } : p },
  { name: "the wrong page number", tweak: (p) => p.page === 2 ? { ...p, page: 1 } : p },
  {
    name: "a body without data",
    tweak: (p) => p.page === 2 ? { ...p, data: "x" as unknown as number[] } : p,
  },
];
for (const c of BROKEN) {
  Deno.test(`collectPages() rejects ${c.name}`, async () => {
    const { fetchPage } = pager(1234, 500, c.tweak);
    await assert.rejects(collectPages(fetchPage), PagingError);
  });
}
