/** Runs the real kubectl against an emulator in tests; tests are ignored when it is not installed. */
import type { KubeSim } from "../server.ts";

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

/** kubectl bound to one emulator; disposing removes its folder. */
export interface Kubectl extends AsyncDisposable {
  /** Runs `kubectl --kubeconfig <emulator's> ...args`, with `stdin` piped in when given. */
  run(args: string[], stdin?: string): Promise<KubectlResult>;
}

/** Writes the emulator's kubeconfig once into a throwaway HOME, so nothing lands in the real kubectl cache. */
export async function openKubectl(kube: KubeSim): Promise<Kubectl> {
  const dir = await Deno.makeTempDir({ prefix: "kubectl-sim-" });
  const kubeconfig = `${dir}/kubeconfig`;
  await kube.writeKubeconfig(kubeconfig);
  return {
    run: (args, stdin) => runKubectl(dir, ["--kubeconfig", kubeconfig, ...args], stdin),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

async function runKubectl(home: string, args: string[], stdin: string | undefined): Promise<KubectlResult> {
  const child = new Deno.Command(KUBECTL, {
    args,
    env: { HOME: home, PATH: "/usr/bin:/bin" },
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
