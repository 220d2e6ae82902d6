import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { scaled } from './time-scale.ts';

/** Whether `redis-server` can be started here (the tests that stop or freeze a Redis of their own need it). */
export const HAS_REDIS_SERVER = spawnSync('redis-server', ['--version']).status === 0;

/** A Redis of this test's own on a free port (the shared one is never stopped); resolves once it accepts connections. */
export async function startPrivateRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + scaled(10_000);
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return child;
    if (Date.now() > deadline) throw new Error('private redis-server did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Kills a child process (a stopped one too: SIGKILL ends it) and waits for its exit. */
export async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
