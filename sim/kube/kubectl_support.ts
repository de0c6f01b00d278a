/** Runs the real kubectl against an emulator in tests; tests skip when it is not installed. */
import type { KubeSim } from "./server.ts";

const KUBECTL = "/usr/bin/kubectl";

/** True when kubectl is installed where the tests expect it. */
export function hasKubectl(): boolean {
  try {
    return Deno.statSync(KUBECTL).isFile;
  } catch {
    return false;
  }
}

/** What one kubectl run printed. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl against the emulator with a throwaway HOME, so nothing lands in the real cache. */
export async function kubectl(
  kube: KubeSim,
  dir: string,
  args: string[],
  stdin?: string,
): Promise<KubectlResult> {
  const kubeconfig = `${dir}/kubeconfig`;
  await kube.writeKubeconfig(kubeconfig);
  const child = new Deno.Command(KUBECTL, {
    args: ["--kubeconfig", kubeconfig, ...args],
    env: { HOME: dir, PATH: "/usr/bin:/bin" },
    clearEnv: true,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}
