// The billing read side: usage connection and live usage (billing-usage.ts), analytics and balance
// (billing-analytics.ts).
import './billing-usage.ts';
import './billing-analytics.ts';
