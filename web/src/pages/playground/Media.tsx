/* The Playground's image generation and speech: one mutation each, the result shown with what it cost. */
import { useMutation } from '@urql/preact';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { typedErrorOf } from '../../lib/errors.ts';
import { formatAmount } from '../../lib/format.ts';
import { ModelSelect } from './ModelSelect.tsx';
import { PLAYGROUND_IMAGE, PLAYGROUND_SPEECH } from './operations.ts';

const field = (event: Event, name: string) =>
  String(new FormData(event.currentTarget as HTMLFormElement).get(name) ?? '');

export function ImageGeneration() {
  const [result, generate] = useMutation(PLAYGROUND_IMAGE);
  const outcome = result.data?.generateImage;
  const image = outcome?.__typename === 'MutationGenerateImageSuccess' ? outcome.data : undefined;
  const submit = (event: Event) => {
    event.preventDefault();
    void generate({ input: { model: field(event, 'model'), prompt: field(event, 'prompt') } });
  };
  return (
    <section class="card" aria-labelledby="image-title">
      <h2 id="image-title">Image</h2>
      <form onSubmit={submit}>
        <ModelSelect id="image-model" type="IMAGE" />
        <label for="image-prompt">Prompt</label>
        <textarea id="image-prompt" name="prompt" rows={2} required />
        <button type="submit" disabled={result.fetching}>
          {result.fetching ? 'Generating…' : 'Generate'}
        </button>
      </form>
      <ErrorNotice error={result.error ?? typedErrorOf(outcome)} />
      {image && (
        <figure class="media">
          {image.images.map((file) => (
            <img key={file.url} src={file.url} alt="Generated" width={image.width} height={image.height} />
          ))}
          <figcaption data-testid="image-cost">
            {image.width}×{image.height} · Cost: {formatAmount(image.charged, image.currency)}
          </figcaption>
        </figure>
      )}
    </section>
  );
}

export function Speech() {
  const [result, speak] = useMutation(PLAYGROUND_SPEECH);
  const outcome = result.data?.synthesizeSpeech;
  const speech = outcome?.__typename === 'MutationSynthesizeSpeechSuccess' ? outcome.data : undefined;
  const submit = (event: Event) => {
    event.preventDefault();
    void speak({ input: { model: field(event, 'model'), input: field(event, 'text') } });
  };
  return (
    <section class="card" aria-labelledby="speech-title">
      <h2 id="speech-title">Speech</h2>
      <form onSubmit={submit}>
        <ModelSelect id="speech-model" type="TTS" />
        <label for="speech-text">Text</label>
        <textarea id="speech-text" name="text" rows={2} maxLength={4096} required />
        <button type="submit" disabled={result.fetching}>
          {result.fetching ? 'Speaking…' : 'Speak'}
        </button>
      </form>
      <ErrorNotice error={result.error ?? typedErrorOf(outcome)} />
      {speech && (
        <figure class="media">
          <audio controls preload="metadata" src={speech.file.url} aria-label="Speech" />
          <figcaption data-testid="speech-cost">
            {speech.characters} characters, voice {speech.voice} · Cost: {formatAmount(speech.charged, speech.currency)}
          </figcaption>
        </figure>
      )}
    </section>
  );
}
