import type { Command } from 'commander';
import type { AuthContext } from '../auth/auth-context.ts';
import type { Operations } from '../services.ts';

type Print = (asJson: boolean | undefined, data: unknown, text: string) => void;

/** `characters review-add`: the operator stores a review (GET /characters/{slug}/reviews serves them). */
export function addCharacterCommands(
  program: Command,
  open: () => Promise<Operations>,
  op: AuthContext,
  print: Print,
): void {
  const characters = program.command('characters').description('Characters and their reviews');
  characters
    .command('review-add')
    .description('Add a review to a character (its rating counts in the character’s stats)')
    .argument('<slug>', 'character slug')
    .requiredOption('--rating <1-5>', 'rating from 1 to 5')
    .requiredOption('--username <name>', 'name shown with the review')
    .option('--message <text>', 'review text')
    .option('--locale <code>', 'language of the review, e.g. en')
    .option('--avatar-url <url>', 'the reviewer’s avatar image')
    .option('--account <id>', 'the account that wrote it (isOwner for its keys)')
    .option('--json', 'print JSON only')
    .action(
      async (
        slug: string,
        opts: {
          rating: string;
          username: string;
          message?: string;
          locale?: string;
          avatarUrl?: string;
          account?: string;
          json?: boolean;
        },
      ) => {
        const review = await (
          await open()
        ).characterReviews.add(op, {
          slug,
          rating: opts.rating,
          username: opts.username,
          message: opts.message,
          locale: opts.locale,
          userAvatarUrl: opts.avatarUrl,
          accountId: opts.account,
        });
        print(
          opts.json,
          { ...review, createdAt: review.createdAt.toISOString() },
          `Review ${review.id} (${review.rating}/5 by ${review.username}) added to ${slug}`,
        );
      },
    );
}
