import { listStores } from '../api.ts';
import { navigate, type Route } from '../router.ts';
import { useLoad } from '../ui.tsx';

/** The stores and the one chosen in `?store=` (else the first), for pages that work on one store. */
export function useStoreChoice(route: Route, section: string) {
  const stores = useLoad(listStores, []);
  const chosen = route.query.get('store') ?? stores.data?.[0]?.id ?? '';
  const choose = (id: string) => navigate(`${section}?store=${encodeURIComponent(id)}`, { replace: true });
  return { stores, storeId: chosen, store: stores.data?.find((s) => s.id === chosen) ?? null, choose };
}
