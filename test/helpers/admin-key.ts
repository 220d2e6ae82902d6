/** The bootstrap ADMIN key of every test app (imports nothing: the run's log scan reads it too). */
export const ADMIN_KEY = 'test-bootstrap-admin-key';
