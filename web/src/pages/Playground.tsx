/* Playground: chat (streamed), image generation and speech against the account, each showing what it cost. */
import './account-pages.css';
import { Chat } from './playground/Chat.tsx';
import { ImageGeneration, Speech } from './playground/Media.tsx';

export function Playground() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Playground</h1>
      <p class="muted">Every call here is a real, billed call with the signed-in credential.</p>
      <div class="playground">
        <Chat />
        <ImageGeneration />
        <Speech />
      </div>
    </section>
  );
}
